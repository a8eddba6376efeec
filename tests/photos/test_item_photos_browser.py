"""Photos where they belong (issue 31) in a real headless Chromium on a 1024x768 touch tablet: a photo taken on a
checklist item from its "Photo" button, its preview with the time and place its EXIF gives (read on the device,
so with no server too), a caption typed before it is sent, and a mark-up that comes back to the same place; sent
online, and kept in the outbox with the server really stopped, then sent once it is back."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.permits import services as permits
from inspect_app.photos.models import Photo
from tests.offline.offline_helpers import (
    answer_checklist, device_id, draw_signature, hold_permits, jpeg, new_report_url, observe_weather, photo_file,
    sha256, sign_in_controlled, submit, wait_for_form, wait_for_outbox,
)
from tests.photos.photo_builders import make_jpeg

pytestmark = pytest.mark.browser

# The camera's clock and position in make_jpeg's EXIF (tests/builders.py: SITE_GPS), as the preview says them.
TAKEN_THERE = "Taken 2026-06-03 09:30 at 42.05000, -72.58000"
NO_EXIF = "No time or place in the photo"


@pytest.fixture
def browser_context_args(browser_context_args):
    """A tablet in landscape, touched with a finger."""
    return {**browser_context_args, "viewport": {"width": 1024, "height": 768}, "has_touch": True}


@pytest.fixture
def silt_fence(make):
    """An inspector's permit with one control, the silt fence SF-1; the inspector, the permit and the fence."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"])
    fence = permits.add_structure(None, permit, name="Silt fence SF-1", kind="bmp", is_underground=False)
    db.session.commit()
    return inspector, permit, fence


def _photos_of(report_id: str) -> dict[str, Photo]:
    db.session.expire_all()
    return {p.original_sha256: p for p in db.session.scalars(select(Photo).where(Photo.inspection_id == report_id))}


def _take_photo_on_the_fence(page, fence, photo: bytes) -> object:
    """Tap the item's "Photo" (a 48 px target beside the answer) and choose `photo`; its preview."""
    field = f"item-control_installed-{fence.id}-photos"
    button = page.locator(f"label[for='{field}']")
    button.scroll_into_view_if_needed()
    box = button.bounding_box()
    assert box["height"] >= 44 and box["width"] >= 44
    with page.expect_file_chooser() as chooser:
        button.tap()
    chooser.value.set_files([photo_file("fence.jpg", photo)])
    return page.locator(f"#{field} ~ [data-photo-previews] li")


def _caption(preview, words: str) -> None:
    caption = preview.get_by_label("Caption")
    expect(caption).to_be_enabled()  # once the device has the file's SHA-256
    caption.fill(words)


def test_an_item_photo_online_shows_its_exif_takes_a_caption_and_a_markup_and_shows_under_its_item(
        silt_fence, server, page):
    inspector, permit, fence = silt_fence
    sign_in_controlled(page, server, inspector)
    page.goto(new_report_url(server, permit))
    wait_for_form(page)
    made = device_id(page)
    answer_checklist(page)

    with_exif, without = make_jpeg(shade=3), jpeg(21)
    preview = _take_photo_on_the_fence(page, fence, with_exif)
    expect(preview.locator("[data-photo-exif]")).to_have_text(TAKEN_THERE)
    _caption(preview, "SF-1 sagging between stakes 4 and 5")
    page.set_input_files("#photos", [photo_file("site.jpg", without)])  # the same code under every photo input
    expect(page.locator("#photos ~ [data-photo-previews] [data-photo-exif]")).to_have_text(NO_EXIF)
    page.click("#add-control")  # a control's row added in place: its items take photos too
    added = page.locator("[data-list-of=control-template] [data-part] input[type=file][name^=item-]").first
    added.set_input_files([photo_file("wattle.jpg", make_jpeg(shade=4))])
    expect(added.locator("xpath=..").locator("[data-photo-exif]")).to_have_text(TAKEN_THERE)
    page.click("[data-list-of=control-template] [data-remove]")  # not this one after all

    mark_up = preview.locator("[data-markup]")
    mark_up.click()
    dialog = page.locator("#photo-markup-dialog")
    expect(dialog).to_be_visible()
    page.wait_for_function("() => document.querySelector('#photo-markup-dialog img').naturalWidth > 0")
    box = dialog.locator("canvas").bounding_box()
    page.mouse.move(box["x"] + 30, box["y"] + box["height"] - 30)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40, steps=6)
    page.mouse.up()
    dialog.locator("[data-markup-done]").click()
    expect(dialog).to_be_hidden()
    expect(mark_up).to_have_text("Marked up (1)")
    expect(mark_up).to_be_focused()  # back on the item, where the inspector was

    page.check("#evaluation-compliant")
    observe_weather(page)
    draw_signature(page)
    page.click("#submit-report")
    expect(page.locator("#report-status")).to_have_text("Submitted")

    stored = _photos_of(made)
    on_fence = stored[sha256(with_exif)]
    assert on_fence.caption == "SF-1 sagging between stakes 4 and 5" and on_fence.markup
    assert db.session.get(Inspection, made).details["item_photos"] == {
        f"control_installed-{fence.id}": [sha256(with_exif)]}
    under_item = page.locator(f"#photos-control_installed-{fence.id}")
    expect(under_item).to_contain_text("SF-1 sagging between stakes 4 and 5")
    expect(under_item.locator("img")).to_have_count(1)
    under_item.scroll_into_view_if_needed()
    page.wait_for_function("id => document.querySelector(`#${id} img`).naturalWidth > 0",
                           arg=f"photos-control_installed-{fence.id}")  # its thumbnail is served


def test_an_item_photo_taken_with_the_server_stopped_shows_its_exif_and_its_caption_arrives(silt_fence, server, page):
    inspector, permit, fence = silt_fence
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    wait_for_form(page)
    made = device_id(page)
    answer_checklist(page)

    photo = make_jpeg(shade=5)
    preview = _take_photo_on_the_fence(page, fence, photo)
    expect(preview.locator("[data-photo-exif]")).to_have_text(TAKEN_THERE)  # read on the device
    _caption(preview, "Typed with no signal")
    page.check("#evaluation-compliant")
    observe_weather(page)
    draw_signature(page)
    submit(page)
    [kept] = wait_for_outbox(page, lambda items: len(items) == 1)
    assert re.search(r"/inspections/[0-9a-f-]{36}/submit$", kept["url"])

    server.start()
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: not items)
    assert db.session.get(Inspection, made).status == "submitted"
    stored = _photos_of(made)[sha256(photo)]
    assert stored.caption == "Typed with no signal"
    assert db.session.get(Inspection, made).details["item_photos"] == {f"control_installed-{fence.id}": [sha256(photo)]}
