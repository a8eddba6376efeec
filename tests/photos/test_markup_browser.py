"""Photo markup in a real headless Chromium: an arrow drawn with pointer events over the photo, saved online,
and a circle drawn offline that waits in the outbox and reaches the server once when the tablet is back."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select
from tests.offline.offline_helpers import sign_in_controlled, wait_for_outbox
from tests.photos.photo_builders import make_jpeg

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.photos.models import Photo
from inspect_app.photos.services import store_photo

pytestmark = pytest.mark.browser


def drag(page, start: tuple[float, float], end: tuple[float, float]) -> None:
    """A finger's drag over the markup canvas, from and to points relative to it (0..1)."""
    canvas = page.locator("#markup-canvas")
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + start[0] * box["width"], box["y"] + start[1] * box["height"])
    page.mouse.down()
    for step in range(1, 6):
        x = start[0] + (end[0] - start[0]) * step / 5
        y = start[1] + (end[1] - start[1]) * step / 5
        page.mouse.move(box["x"] + x * box["width"], box["y"] + y * box["height"])
    page.mouse.up()


def stored_markup(photo_id: str) -> list[dict] | None:
    db.session.expire_all()
    return db.session.get(Photo, photo_id).markup


def markups_audited() -> int:
    return db.session.scalar(select(func.count()).select_from(AuditEntry).where(AuditEntry.action == "photo.markup"))


def test_an_arrow_drawn_online_then_a_circle_drawn_offline_arrive_once(site, server, page, context):
    photo = store_photo(site["inspector"], site["permit"], make_jpeg(), caption="North silt fence",
                        inspection=site["inspection"])
    db.session.commit()
    sign_in_controlled(page, server, site["inspector"])
    page.goto(f"{server.url}/photos/{photo.id}/markup")

    drag(page, (0.2, 0.2), (0.6, 0.7))
    assert page.locator("#markup-canvas").evaluate(  # the arrow shows on the canvas as it is drawn
        "c => c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v, i) => i % 4 === 0 && v > 200)")
    page.get_by_role("button", name="Save markup").click()
    page.wait_for_selector("[data-marked-up]")
    [arrow] = stored_markup(photo.id)
    assert arrow["kind"] == "arrow"
    assert arrow["from"] == pytest.approx([0.2, 0.2], abs=0.02) and arrow["to"] == pytest.approx([0.6, 0.7], abs=0.02)

    page.goto(f"{server.url}/photos/{photo.id}/markup")  # seen online, so the tablet keeps the page
    context.set_offline(True)
    page.goto(f"{server.url}/photos/{photo.id}/markup")
    page.check("input[name=tool][value=circle]")
    drag(page, (0.5, 0.5), (0.6, 0.5))
    page.get_by_role("button", name="Save markup").click()
    wait_for_outbox(page, lambda items: [i["url"] for i in items] == [f"/photos/{photo.id}/markup"])
    assert stored_markup(photo.id) == [arrow] and markups_audited() == 1

    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    wait_for_outbox(page, lambda items: not items)
    arrow_again, circle = stored_markup(photo.id)
    assert arrow_again == arrow and circle["kind"] == "circle" and circle["at"] == pytest.approx([0.5, 0.5], abs=0.02)
    assert markups_audited() == 2  # the queued post applied once
    page.goto(f"{server.url}/photos/{photo.id}/markup")
    assert "Marked up:" in page.inner_text("#photo-markup")


def test_a_label_without_text_asks_for_the_text_and_a_refused_markup_says_why(site, server, page, app):
    photo = store_photo(site["inspector"], site["permit"], make_jpeg(), inspection=site["inspection"])
    db.session.commit()
    sign_in_controlled(page, server, site["inspector"])
    page.goto(f"{server.url}/photos/{photo.id}/markup")
    page.check("input[name=tool][value=label]")
    page.locator("#markup-canvas").click(position={"x": 40, "y": 40})
    assert page.evaluate("document.activeElement.name") == "label_text"
    page.fill("input[name=label_text]", "Sediment in the inlet")
    page.locator("#markup-canvas").click(position={"x": 40, "y": 40})
    assert '"text":"Sediment in the inlet"' in page.input_value("[data-markup-value]")
    page.evaluate("document.querySelector('[data-markup-value]').value = '[{\"kind\": \"star\"}]'")
    page.get_by_role("button", name="Save markup").click()
    page.wait_for_selector("#markup-error")
    assert "Shape 1 is not an arrow, a circle or a label." in page.inner_text("#markup-error")
    assert stored_markup(photo.id) is None
