"""Mark up a photo the draft holds, from the report, and land back on that photo (issue 31), in a real headless
Chromium on a 1024x768 touch tablet, with the service worker in control as on a field tablet."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from inspect_app.extensions import db
from tests.builders import SITE_GPS, jpeg
from tests.offline.offline_helpers import sign_in_controlled

pytestmark = pytest.mark.browser


@pytest.fixture
def browser_context_args(browser_context_args):
    """A tablet in landscape, touched with a finger."""
    return {**browser_context_args, "viewport": {"width": 1024, "height": 768}, "has_touch": True}


def test_mark_up_from_the_report_comes_back_to_the_same_photo(make, live_server, page, weather_offline):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    db.session.commit()
    sign_in_controlled(page, live_server, inspector)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    page.locator("#start-inspection button[data-start=erosion_control]").tap()
    page.wait_for_url(re.compile(r"/inspections/[0-9a-f-]{36}$"))
    report = page.url
    photo_input = page.locator("input[type=file][name^=item-][name$=-site-photos]").first
    photo_input.set_input_files([{"name": "fence.jpg", "mimeType": "image/jpeg",
                                  "buffer": jpeg(5, (800, 600), taken="2026:12:04 09:30:00", gps=SITE_GPS)}])
    page.locator("#save-draft").tap()
    page.wait_for_url(re.compile(r"/inspections/[0-9a-f-]{36}"))

    link = page.locator(".stored-photos a", has_text="Mark up").first
    tile = link.locator("xpath=ancestor::li[contains(@class, 'photo-tile')]")
    tile_id = tile.get_attribute("id")
    section = link.locator("xpath=ancestor::details[1]")
    if section.count() and section.get_attribute("open") is None:
        section.locator(":scope > summary").tap()  # the item's section, folded once answered
    link.tap()
    page.wait_for_url(re.compile(r"/markup\?back="))
    expect(page.get_by_role("link", name="Back to the report")).to_be_visible()
    box = page.locator("#markup-canvas").bounding_box()
    page.mouse.move(box["x"] + 40, box["y"] + 40)
    page.mouse.down()
    page.mouse.move(box["x"] + 200, box["y"] + 160)
    page.mouse.up()
    page.get_by_role("button", name="Save markup").tap()

    page.wait_for_url(lambda url: "/markup" not in url)
    assert page.url == f"{report}#{tile_id}"
    expect(page.locator(f"#{tile_id}")).to_be_in_viewport()
    expect(page.locator(f"#{tile_id} [data-marked-up]")).to_be_visible()
