"""The markup as data and as pixels, without a database: what is stored, and where Pillow draws it."""
from __future__ import annotations

import io

from PIL import Image
from tests.photos.photo_builders import make_jpeg

from inspect_app.photos.markup import as_json, parse_markup
from inspect_app.photos.processing import make_marked_renditions, make_renditions

MARK_RED = (230, 20, 20)


def _near(pixel, colour, tolerance: int = 60) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(pixel, colour))


def test_shapes_are_stored_to_a_ten_thousandth_with_labels_trimmed() -> None:
    shapes = parse_markup('[{"kind": "arrow", "from": [0.123456, 0], "to": [1, 0.5]},'
                          ' {"kind": "label", "at": [0.5, 0.5], "text": "  Sediment in CB-2 "}]')
    assert as_json(shapes) == [{"kind": "arrow", "from": [0.1235, 0.0], "to": [1.0, 0.5]},
                               {"kind": "label", "at": [0.5, 0.5], "text": "Sediment in CB-2"}]
    assert as_json(parse_markup("[]")) is None


def test_the_markup_is_drawn_where_its_coordinates_say_on_every_rendition() -> None:
    plain = make_renditions(make_jpeg((1200, 900), orientation=None))
    marked = make_marked_renditions(plain.display, parse_markup(
        '[{"kind": "circle", "at": [0.3, 0.75], "r": 0.15}, {"kind": "arrow", "from": [0.55, 0.8], "to": [0.95, 0.8]}]'))

    for kind in ("display", "thumb", "print"):
        with Image.open(io.BytesIO(getattr(marked, kind))) as picture, \
                Image.open(io.BytesIO(getattr(plain, kind))) as unmarked:
            assert picture.size == unmarked.size
            width, height = picture.size
            picture, unmarked = picture.convert("RGB"), unmarked.convert("RGB")
            # On the photo's blue lower half: the circle's rim, left of its centre by its radius (0.15 of
            # the shorter side), and the middle of the arrow's shaft turn red; the circle's centre keeps
            # the photo's own colour.
            for probe in ((round(0.3 * width - 0.15 * height), round(0.75 * height)),
                          (round(0.75 * width), round(0.8 * height))):
                assert picture.getpixel(probe)[0] > unmarked.getpixel(probe)[0] + 60, (kind, probe)
            centre = (round(0.3 * width), round(0.75 * height))
            assert _near(picture.getpixel(centre), unmarked.getpixel(centre), 20)
            assert not _near(picture.getpixel(centre), MARK_RED)
