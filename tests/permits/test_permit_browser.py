"""Permits in a real headless Chromium: the tablet workflow an agent goes through."""
import pytest

pytestmark = pytest.mark.browser


def test_agent_creates_a_permit_and_adds_an_area_in_page(make, live_server, page, sign_in):
    agent = make.user("agent")
    sign_in(page, agent)
    page.click("text=New permit")
    page.fill("#number", "SWP-2026-900")
    page.fill("#issued_on", "2026-11-02")
    page.fill("#site_address", "20 Williams Street, Longmeadow, MA")
    page.fill("#latitude", "42.0501")
    page.fill("#longitude", "-72.5828")
    page.fill("#disturbed_acres", "1.25")
    page.fill("#owner_name", "Williams Street Partners")
    page.fill("#applicant_name", "Williams Street Partners")
    page.click("button:has-text('Save permit')")
    page.wait_for_selector("h1:has-text('Permit SWP-2026-900')")

    # An htmx edit: a bad value shows its message beside the field, then a good one adds the row.
    page.fill("#area-name", "Lot 3 pad")
    page.fill("#area-acres", "-1")
    page.click("button:has-text('Add area')")
    page.wait_for_selector("#areas .field-error")
    assert "Number must be between" in page.inner_text("#areas .field-error")
    page.fill("#area-acres", "0.75")
    page.click("button:has-text('Add area')")
    page.wait_for_selector("#areas td:has-text('Lot 3 pad')")
    assert "Disturbed" in page.inner_text("#areas")
