"""The photo picker in a real headless Chromium: choose a photo, upload with htmx, see it, fix a caption."""
from __future__ import annotations

import pytest
from sqlalchemy import select
from tests.photos.photo_builders import make_jpeg

from inspect_app.extensions import db
from inspect_app.photos.models import Photo

pytestmark = pytest.mark.browser


def test_inspector_adds_a_photo_and_a_bad_file_is_refused_beside_the_input(site, live_server, page, sign_in):
    inspection = site["inspection"]
    sign_in(page, site["inspector"])
    page.goto(f"{live_server.url}/permits/{site['permit'].id}/photos/add?inspection_id={inspection.id}")
    picker = page.locator(".photo-picker")

    picker.locator("input[type=file]").set_input_files(
        {"name": "notes.jpg", "mimeType": "image/jpeg", "buffer": b"these are notes, not a photo"})
    picker.get_by_role("button", name="Upload photo").click()
    page.wait_for_selector(".photo-picker .field-error")
    assert "The file is not an image" in page.inner_text(".photo-picker .has-error")

    page.locator(".photo-picker input[type=file]").set_input_files(
        {"name": "site.jpg", "mimeType": "image/jpeg", "buffer": make_jpeg()})
    page.locator(".photo-picker input[name=caption]").fill("Inlet protection at CB-2")
    page.get_by_role("button", name="Upload photo").click()
    page.wait_for_selector(".photo-grid figcaption:has-text('Inlet protection at CB-2')")
    assert "Jun 3, 2026 9:30 AM" in page.inner_text(".photo-grid")
    assert page.locator(".photo-picker .field-error:visible").count() == 0
    thumb = page.locator(".photo-grid img").first
    thumb.scroll_into_view_if_needed()  # the thumbnail loads lazily: wait until it has, a broken one never does
    page.wait_for_function("img => img.complete && img.naturalWidth > 0", arg=thumb.element_handle())
    assert page.evaluate("img => img.naturalHeight > img.naturalWidth", thumb.element_handle())

    page.locator(".photo-caption-edit input[name=caption]").fill("Inlet protection at CB-2, after rain")
    page.get_by_role("button", name="Save caption").click()
    page.wait_for_selector(".photo-grid figcaption:has-text('after rain')")
    db.session.expire_all()
    assert db.session.scalars(select(Photo.caption)).one() == "Inlet protection at CB-2, after rain"


def test_a_photo_over_the_limit_is_refused_before_it_is_sent(site, live_server, page, sign_in, app):
    app.config["MAX_CONTENT_LENGTH"] = 20_000  # the picker refuses on the tablet what the server would
    sign_in(page, site["inspector"])
    page.goto(f"{live_server.url}/permits/{site['permit'].id}/photos/add?inspection_id={site['inspection'].id}")
    uploads = []
    page.on("request", lambda request: uploads.append(request) if request.method == "POST" else None)

    page.locator(".photo-picker input[type=file]").set_input_files(
        {"name": "big.jpg", "mimeType": "image/jpeg", "buffer": make_jpeg((1600, 1200)) + b"\0" * 30_000})
    page.get_by_role("button", name="Upload photo").click()

    message = page.locator("[data-photo-message]")
    message.wait_for()
    assert "The photo is too large to send: the limit is 19 KB" in message.inner_text()
    assert uploads == [] and db.session.scalars(select(Photo)).first() is None
