"""On a tablet, in a real headless Chromium: the permit page leads with what to do now (online and from
the copy held on the device), and the dashboard below 1100 px is one card per permit, its filters in the URL."""
from __future__ import annotations

import io
import re

import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

from inspect_app.extensions import db
from inspect_app.permits import services as permits

from tests.dashboard.test_permit_now import busy_site
from tests.offline.offline_helpers import hold_permits, new_report_url, sign_in_controlled, wait_for_form

pytestmark = pytest.mark.browser
TABLET = {"width": 1024, "height": 768}
PHONE = {"width": 390, "height": 844}


def test_the_first_screen_of_the_permit_page_says_what_to_do_and_starts_it(make, record, live_server, page, sign_in):
    inspector = make.user("inspector")
    permit = busy_site(make, record, inspectors=[inspector])
    page.set_viewport_size(TABLET)
    sign_in(page, inspector)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    storm = page.locator(".now-item[data-kind=storm_inspection]")
    expect(storm).to_contain_text("Storm inspection: ")
    expect(storm).to_contain_text("due by")
    # On the first screen, with its button, without scrolling.
    start = storm.get_by_role("button", name="Start")
    box = start.bounding_box()
    assert box["y"] + box["height"] <= TABLET["height"], box
    expect(page.locator(".now-item").first).to_contain_text("Overdue")
    # The rest is folded: photos are closed until asked for; the areas are open.
    expect(page.locator("#photos")).to_be_hidden()
    page.click("#fold-photos > summary")
    expect(page.locator("#photos")).to_be_visible()
    expect(page.locator("#areas")).to_be_visible()
    expect(page.locator("[data-held-note]")).to_be_hidden()
    # On a phone the items wrap: nothing runs off the side of the screen.
    page.set_viewport_size(PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.set_viewport_size(TABLET)

    start.click()
    page.wait_for_url(re.compile(r"/inspections/[0-9a-f-]{36}$"))
    expect(page.locator("h1")).to_contain_text("Erosion control inspection")


def test_the_permit_page_prints_whole_with_its_folded_parts_open(make, live_server, page, sign_in):
    # A folded part is closed on screen, and its words are still on paper: an inspector prints the page
    # for the site file.
    agent = make.user("agent")
    permit = make.permit()
    permits.add_structure(None, permit, name="Infiltration system IS-3", kind="infiltration", is_underground=True,
                          design_size="38 ft x 14 ft", design_invert="EL 181.75")
    db.session.commit()
    sign_in(page, agent)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    expect(page.locator("#fold-structures")).not_to_have_attribute("open", "")
    expect(page.get_by_text("38 ft x 14 ft")).to_be_hidden()
    printed = PdfReader(io.BytesIO(page.pdf(format="Letter"))).pages
    words = " ".join(" ".join(p.extract_text().split()) for p in printed)
    assert "38 ft x 14 ft" in words and "EL 181.75" in words


def test_the_held_permit_page_opens_offline_and_says_it_is_as_known_when_held(make, record, server, page):
    inspector = make.user("inspector")
    permit = busy_site(make, record, inspectors=[inspector])
    page.set_viewport_size(TABLET)
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()

    page.goto(f"{server.url}/permits/{permit.id}")
    expect(page.locator("h1")).to_contain_text(permit.number)
    note = page.locator("[data-held-note]")
    expect(note).to_be_visible()
    expect(note).to_contain_text(re.compile(r"As known when held at \w{3} \d+, \d{4} \d+:\d\d [AP]M"))
    expect(page.locator(".now-item[data-kind=stabilization]")).to_contain_text("Overdue")
    expect(page.locator(".now-item[data-kind=storm_inspection]").get_by_role("button", name="Start")).to_be_visible()
    box = note.bounding_box()
    assert box["y"] < TABLET["height"]


def test_the_dashboard_below_1100_px_is_one_card_per_permit_with_its_worst_status(make, record, live_server, page,
                                                                                 sign_in):
    late = busy_site(make, record, number="LM-2026-101")
    calm = make.permit(number="LM-2026-102", construction_started_on=record.local_day(2),
                       issued_on=record.local_day(30))
    page.set_viewport_size(TABLET)
    sign_in(page, make.user("agent"))
    page.goto(f"{live_server.url}/dashboard/")
    expect(page.locator(".board-table")).to_be_hidden()
    card = page.locator(f"#card-{late.id}")
    expect(card).to_be_visible()
    expect(card.locator("h3")).to_contain_text("Overdue")
    expect(card.locator("h3")).to_contain_text("LM-2026-101")
    # One card per permit: the permit's several items are in it, not a card each.
    assert page.locator(f"#card-{late.id}").count() == 1
    assert card.locator("li").count() >= 3
    assert page.locator(f"#card-{calm.id}").count() <= 1
    # The reason folds out.
    item = card.locator("li", has_text="Stabilization started")
    expect(item.locator("cite")).to_be_hidden()
    item.locator("summary").click()
    expect(item.locator("cite")).to_have_text("CGP 2022 Part 2.2.14.a.i")
    # The cards stack in one column on a phone and do not run off the screen.
    page.set_viewport_size(PHONE)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], width
    # Wide: the table, not the cards.
    page.set_viewport_size({"width": 1280, "height": 800})
    expect(page.locator(".board-table")).to_be_visible()
    expect(card).to_be_hidden()


def test_dashboard_filters_stay_in_the_url_so_a_view_can_be_shared_and_reloaded(make, record, live_server, page,
                                                                              sign_in):
    late = busy_site(make, record, number="LM-2026-201")
    page.set_viewport_size(TABLET)
    sign_in(page, make.user("agent"))
    page.goto(f"{live_server.url}/dashboard/")
    card = page.locator(f"#card-{late.id}")
    expect(card).to_contain_text("Erosion-control inspection")
    page.select_option("select[name=kind]", "stabilization")
    page.wait_for_url(re.compile(r"kind=stabilization"))
    expect(card).not_to_contain_text("Erosion-control inspection")
    expect(card).to_contain_text("Stabilization started")

    shared = page.url
    page.goto("about:blank")
    page.goto(shared)
    expect(page.locator("select[name=kind]")).to_have_value("stabilization")
    expect(page.locator(f"#card-{late.id}")).to_contain_text("Stabilization started")
    expect(page.locator(f"#card-{late.id}")).not_to_contain_text("Erosion-control inspection")



def test_every_role_s_top_menu_fits_on_one_line_on_a_1024_px_tablet(make, live_server, browser, sign_in, tmp_path):
    # A tablet held landscape in the field (1024×768, touch): the menu in one row, every destination in it, so the
    # page starts where the tablet expects it and no item hides under another. The name is a long one on purpose.
    owner, inspector = make.user("permittee", name="Maple Ridge Homes LLC"), make.user("inspector")
    make.permit(owner=owner, inspectors=[inspector])
    for user in (make.user("agent", name="Alexandra Montgomery-Fitzgerald"), inspector, owner, make.user("admin")):
        context = browser.new_context(viewport=TABLET, has_touch=True)
        page = context.new_page()
        sign_in(page, user)
        page.goto(f"{live_server.url}/permits/")
        items = page.locator(".topnav > li")
        tops = [items.nth(i).evaluate("li => li.offsetTop") for i in range(items.count())]
        page.screenshot(path=str(tmp_path / f"menu-{user.role}.png"))
        assert items.count() >= 4
        assert max(tops) - min(tops) < 10, f"the {user.role}'s menu wraps at 1024 px: its items start at {tops}"
        assert page.evaluate("document.documentElement.scrollWidth") <= TABLET["width"]
        # The account (the password) is reached from the name of who is signed in.
        expect(page.locator("header").get_by_role("link", name="Account & password")).to_be_visible()
        context.close()


def test_my_day_is_held_with_the_permits_and_its_start_opens_the_held_new_report_offline(make, record, server, page):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=record.local_day(12),
                         issued_on=record.local_day(40))
    page.set_viewport_size(TABLET)
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()

    page.goto(f"{server.url}/permits/")
    page.get_by_role("link", name="My day").click()
    due = page.locator(".my-day li[data-kind=inspection]", has_text=permit.number)
    expect(due).to_contain_text("Overdue")
    due.get_by_role("button", name="Start").click()
    page.wait_for_url(new_report_url(server, permit))
    wait_for_form(page)
