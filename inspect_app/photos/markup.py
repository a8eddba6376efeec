"""Photo markup: the arrows, circles and short labels an inspector draws on a photo to show *where*.

Pure Python: no Flask, no database, no Pillow. The markup is data beside the photo (a JSON list of
shapes); the original file is never touched, and a marked-up copy is drawn from it by
`processing.make_marked_renditions`. The server is the one place that checks a markup: the page's
script only draws, and reads the limits below from the page.

Shapes, in coordinates relative to the upright photo (0..1 across its width and down its height):

    {"kind": "arrow", "from": [x, y], "to": [x, y]}     the head is at "to"
    {"kind": "circle", "at": [x, y], "r": r}           r relative to the photo's shorter side
    {"kind": "label", "at": [x, y], "text": "..."}     the text starts at "at"
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

SHAPE_KINDS = ("arrow", "circle", "label")
MAX_SHAPES = 20
LABEL_MAX_CHARS = 40
# A list of MAX_SHAPES labels of the longest kind is well under this; anything longer is not a markup.
MAX_TEXT_BYTES = 8_000
# Photos one form may send marked up before they are stored (the report form), each by its SHA-256.
MAX_MARKED_PHOTOS = 50
SHA256 = re.compile(r"[0-9a-f]{64}")
# Shapes are stored to 1/10,000 of the photo: finer than a pixel of the display rendition (2,048 px).
_DIGITS = 4
_FIELDS = {"arrow": {"kind", "from", "to"}, "circle": {"kind", "at", "r"}, "label": {"kind", "at", "text"}}
# The words pages and PDFs use for a marked-up photo (one home: the tile and the report PDF read it here).
MARKED_UP = "Marked up: the arrows, circles and labels are drawn on a copy; the original photo is unchanged."


class MarkupRefused(ValueError):
    """The markup sent is not one we store; the message says why, in words for the inspector."""


@dataclass(frozen=True)
class Shape:
    """One checked shape: its kind, its points (relative 0..1), a radius (circle) and a text (label)."""

    kind: str
    points: tuple[tuple[float, float], ...]
    r: float | None = None
    text: str | None = None

    def as_json(self) -> dict:
        """The shape as stored and sent back to the page (the format in the module docstring)."""
        if self.kind == "arrow":
            return {"kind": "arrow", "from": list(self.points[0]), "to": list(self.points[1])}
        if self.kind == "circle":
            return {"kind": "circle", "at": list(self.points[0]), "r": self.r}
        return {"kind": "label", "at": list(self.points[0]), "text": self.text}


def parse_markup(text: str | None) -> list[Shape]:
    """The shapes of a posted markup (JSON text); an empty list removes the markup. MarkupRefused if bad."""
    if text is None or not text.strip():
        raise MarkupRefused("Send the markup: a list of shapes (an empty list removes the markup).")
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        raise MarkupRefused(f"The markup is too long: at most {MAX_SHAPES} shapes with short labels.")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise MarkupRefused("The markup is not readable (it is not a JSON list of shapes).") from None
    return check_shapes(data)


def parse_photo_markups(text: str | None) -> dict[str, list[Shape]]:
    """The markups drawn on photos sent with a form before they were stored (the report form's
    `photos_markup`): a JSON object from each photo's SHA-256 (of its original file) to its shapes. Nothing
    sent: none. MarkupRefused if bad."""
    if text is None or not text.strip():
        return {}
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES * MAX_MARKED_PHOTOS:
        raise MarkupRefused(f"The markups are too long: at most {MAX_MARKED_PHOTOS} photos, each with at most "
                            f"{MAX_SHAPES} shapes.")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        raise MarkupRefused("The markups of the photos are not readable (not a JSON object).") from None
    if not isinstance(data, dict) or len(data) > MAX_MARKED_PHOTOS:
        raise MarkupRefused(f"The markups must name at most {MAX_MARKED_PHOTOS} photos by their SHA-256.")
    if not all(isinstance(sha, str) and SHA256.fullmatch(sha) for sha in data):
        raise MarkupRefused("A markup names its photo by the SHA-256 of the file (64 hexadecimal digits).")
    return {sha: check_shapes(shapes) for sha, shapes in data.items()}


def check_shapes(data: object) -> list[Shape]:
    """The shapes of decoded markup data (a list of dicts); MarkupRefused naming the first bad shape."""
    if not isinstance(data, list):
        raise MarkupRefused("The markup must be a list of shapes.")
    if len(data) > MAX_SHAPES:
        raise MarkupRefused(f"A photo may carry at most {MAX_SHAPES} shapes; this markup has {len(data)}. "
                            "Remove some and save again.")
    return [_shape(item, number) for number, item in enumerate(data, 1)]


def as_json(shapes: list[Shape]) -> list[dict] | None:
    """The stored form of checked shapes; None (no markup) for none."""
    return [shape.as_json() for shape in shapes] or None


def _shape(item: object, number: int) -> Shape:
    if not isinstance(item, dict) or item.get("kind") not in SHAPE_KINDS:
        raise MarkupRefused(f"Shape {number} is not an arrow, a circle or a label.")
    kind = item["kind"]
    unknown = sorted(set(item) - _FIELDS[kind])
    if unknown:
        raise MarkupRefused(f"Shape {number} ({kind}) has a field it cannot have: {unknown[0]}.")
    missing = sorted(_FIELDS[kind] - set(item))
    if missing:
        raise MarkupRefused(f"Shape {number} ({kind}) is missing its “{missing[0]}”.")
    if kind == "arrow":
        start, end = _point(item["from"], number, kind), _point(item["to"], number, kind)
        if start == end:
            raise MarkupRefused(f"Shape {number} (arrow) starts where it ends: drag to draw an arrow.")
        return Shape("arrow", (start, end))
    at = _point(item["at"], number, kind)
    if kind == "circle":
        radius = _number(item["r"])
        if radius is None or not 0 < radius <= 1:
            raise MarkupRefused(f"Shape {number} (circle): the radius must be a number above 0 and at most 1.")
        return Shape("circle", (at,), r=round(radius, _DIGITS))
    text = item["text"].strip() if isinstance(item["text"], str) else ""
    if not text or len(text) > LABEL_MAX_CHARS or not text.isprintable():
        raise MarkupRefused(f"Shape {number} (label): the text must be 1 to {LABEL_MAX_CHARS} characters "
                            "on one line.")
    return Shape("label", (at,), text=text)


def _point(value: object, number: int, kind: str) -> tuple[float, float]:
    coordinates = [_number(v) for v in value] if isinstance(value, list) and len(value) == 2 else [None]
    if any(c is None or not 0 <= c <= 1 for c in coordinates):
        raise MarkupRefused(f"Shape {number} ({kind}): a point must be two numbers from 0 to 1 "
                            "(a place on the photo).")
    x, y = coordinates
    return round(x, _DIGITS), round(y, _DIGITS)


def _number(value: object) -> float | None:
    """A finite int or float (not a bool, not a string) as a float; None otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits
        return None
    return number if math.isfinite(number) else None


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number")
