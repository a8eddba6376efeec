"""The core offline flow in WebKit (the iPad's engine): hold permits, lose the server, submit an inspection
with a photo, get the server back, and find the report on it exactly once. And a shared tablet: what is held
for one person is never shown to the next one signed in.

WebDriver has no "go offline" switch: the live server is stopped, as a real outage looks to the tablet
(`navigator.onLine` stays true), and started again on the same port (the same origin). See docs/webkit.md.
"""
from __future__ import annotations

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.photos.models import Photo

from tests.inspections.report_helpers import OBSERVED_WEATHER
from tests.offline.offline_helpers import jpeg, sha256
from tests.webkit_browser import (
    DRIVER, device_store, sign_in_controlled, text_of, wait_for_text, wait_until, webkit, xvfb,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.webkit,
    pytest.mark.skipif(DRIVER is None, reason="WebKitWebDriver is not installed (apt webkit2gtk-driver; "
                                              "`make test` installs it)"),
]


@pytest.fixture
def tablet(tmp_path):
    """A WebKitGTK browser under WebDriver in its own Xvfb; the driver's log is kept beside the test."""
    with xvfb() as display, webkit(display, tmp_path / "webkitwebdriver.log") as driver:
        yield driver


def _draw_signature(driver) -> None:
    pad = driver.find_element("css selector", "#signature-canvas")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", pad)
    actions = ActionChains(driver).move_to_element_with_offset(pad, -100, 0).click_and_hold()
    for dx, dy in ((-40, -30), (20, 20), (60, -30), (100, 10)):
        actions.move_to_element_with_offset(pad, dx, dy)
    actions.release().perform()


def _fill_report(driver, photo_path) -> str:
    """Answer the checklist, add the photo, say "in compliance", sign and submit; the report's device id."""
    wait_until(driver, lambda d: d.execute_script(
        "var f = document.getElementById('report-form'); var fresh = document.querySelector('input[data-fresh-key]');"
        " return f && /\\/inspections\\/[0-9a-f-]{36}$/.test(f.getAttribute('action')) && fresh && fresh.value;"),
        message="the report form never got its device-made id")
    driver.execute_script("document.querySelectorAll('#checklist input[type=radio][value=yes]').forEach(function (r) {"
                          " r.checked = true; r.dispatchEvent(new Event('change', {bubbles: true})); });")
    driver.find_element("css selector", "#photos").send_keys(str(photo_path))
    driver.execute_script("document.getElementById('evaluation-compliant').click()")
    driver.find_element("css selector", "#observed_weather").send_keys(OBSERVED_WEATHER)  # (e) station pending
    _draw_signature(driver)
    made = driver.find_element("css selector", "#report-form").get_attribute("action").rsplit("/", 1)[-1]
    driver.find_element("css selector", "#submit-report").click()
    return made


def test_an_inspection_made_with_the_server_down_arrives_once_with_its_photo(site, server, tablet, tmp_path):
    inspector, permit = site
    photo = jpeg(61)
    photo_path = tmp_path / "site.jpg"
    photo_path.write_bytes(photo)

    sign_in_controlled(tablet, server.url, inspector)
    tablet.get(f"{server.url}/offline/")
    tablet.find_element("css selector", "#hold-all").click()
    wait_for_text(tablet, "#held-status", "Done", timeout_s=60)
    assert permit.number in text_of(tablet, "#held-list")

    server.stop()  # the outage: nothing answers on the server's port
    tablet.get(f"{server.url}/permits/{permit.id}")
    assert permit.number in text_of(tablet, "h1")  # the held page, from the service worker
    tablet.find_element("css selector", "button[data-start=erosion_control]").click()
    wait_until(tablet, lambda d: f"/permits/{permit.id}/inspections/new/erosion_control" in d.current_url,
               message="the held new-report form did not open")
    inspection_id = _fill_report(tablet, photo_path)
    wait_for_text(tablet, "#offline-message", "Saved on this device — will sync")
    [item] = device_store(tablet)
    assert item["url"] == f"/inspections/{inspection_id}/submit"
    # Left while it reads the device's store (as a page does as it opens): WebKit keeps it frozen in its
    # back/forward cache, and its read must not hold up the outbox's delete on the next page for good.
    tablet.execute_script("(function again() { FormStore.all().then(again, function () {}); })()")
    tablet.get(f"{server.url}/outbox")  # still down: the worker's copy of the page, the device's list
    wait_for_text(tablet, f"#item-{item['id']}", f"Form for /inspections/{inspection_id}/submit")
    assert tablet.execute_script(f"return document.querySelectorAll('#item-{item['id']} .photo-grid img').length") == 1
    db.session.expire_all()
    assert db.session.get(Inspection, inspection_id) is None

    server.start()  # the same port: the same origin, its worker and IndexedDB
    tablet.find_element("css selector", "#sync-now").click()  # no `online` event when a server comes back
    wait_until(tablet, lambda d: device_store(d) == [], timeout_s=60, message="the outbox never emptied")

    db.session.expire_all()
    report = db.session.get(Inspection, inspection_id)
    assert report is not None and report.status == "submitted" and report.permit_id == permit.id
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 1
    [stored] = db.session.scalars(select(Photo)).all()
    assert stored.original_sha256 == sha256(photo) and stored.inspection_id == inspection_id


def test_on_a_shared_tablet_the_next_person_is_shown_nothing_held_for_the_first(site, server, tablet, make):
    """Inspector A holds their permit; A's sign-in expires without signing out and B signs in: B sees neither A's
    list nor, with the server down, A's pages. A, signed in again, has them all."""
    inspector, permit = site
    other = make.user("inspector")  # not on A's permit
    sign_in_controlled(tablet, server.url, inspector)
    tablet.get(f"{server.url}/offline/")
    tablet.find_element("css selector", "#hold-all").click()
    wait_for_text(tablet, "#held-status", "Done", timeout_s=60)

    tablet.delete_all_cookies()  # A's sign-in expires on site
    sign_in_controlled(tablet, server.url, other)
    tablet.get(f"{server.url}/offline/")
    wait_until(tablet, lambda d: d.find_elements("css selector", "#held-list li.empty"),
               message="B was shown the permits held for A")
    assert permit.number not in text_of(tablet, "main")
    server.stop()
    for url in (f"/permits/{permit.id}", f"/permits/{permit.id}/inspections/new/erosion_control"):
        tablet.get(f"{server.url}{url}")
        wait_for_text(tablet, "main", "You are offline and this page is not saved on this device")
        assert permit.number not in text_of(tablet, "main")

    server.start()
    tablet.delete_all_cookies()
    sign_in_controlled(tablet, server.url, inspector)
    tablet.get(f"{server.url}/offline/")
    wait_for_text(tablet, "#held-list", permit.number)
    server.stop()
    tablet.get(f"{server.url}/permits/{permit.id}")
    wait_for_text(tablet, "h1", permit.number)
