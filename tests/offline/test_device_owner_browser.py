"""Whose is what a device keeps, and a form posted once, in a real Chromium: a shared tablet whose first user's
sign-in expired (held pages, kept typing, the outbox), a post made under someone else's sign-in, Back after
submitting a new report (online and offline), a sign-in that expires while a report is filled in, the same new
report in two tabs, and the device's GPS on a report made offline."""
from __future__ import annotations

import datetime as dt

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.types import LOCAL_TZ, utcnow

from tests.inspections.report_helpers import OBSERVED_WEATHER
from tests.offline.offline_helpers import (
    answer_checklist, device_id, draw_signature, fill_erosion_form, fill_erosion_report, hold_permits, jpeg,
    new_report_url, outbox, sign_in_controlled, submit, wait_for_drafts, wait_for_form, wait_for_outbox,
)

pytestmark = pytest.mark.browser

OFFLINE_PAGE = "You are offline and this page is not saved on this device"


def _reports() -> list[Inspection]:
    db.session.expire_all()
    return db.session.scalars(select(Inspection)).all()


def _count() -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(Inspection))


def _sign_in_through_the_form(page, user) -> None:
    """On the sign-in page the app sent us to: sign in as `user`."""
    page.wait_for_selector("input[name=password]")
    page.fill("input[name=email]", user.email)
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login" not in url)


def _others_in_another_tab(context, server, *people):
    """A second tab of the same browser, in which each of `people` in turn logs in after whoever was signed in logs
    out; the last stays signed in."""
    second = context.new_page()
    second.goto(f"{server.url}/permits/")
    for who in people:
        second.click("header button:has-text('Log out')")
        second.wait_for_url(lambda url: "/login" in url)
        _sign_in_through_the_form(second, who)
    return second


def _expired_then_signed_in_in_another_tab(context, server, who):
    """The first tab's sign-in is gone (it expired, or the browser restarted) and `who` signs in on a second tab
    of the same browser, which it returns."""
    context.clear_cookies()
    second = context.new_page()
    sign_in_controlled(second, server, who)
    return second


def _online_draft(page, server, permit) -> str:
    """Start an erosion-control report online (a draft on the server) and fill it in up to the signature; its id."""
    page.goto(f"{server.url}/permits/{permit.id}")
    page.click("button[data-start=erosion_control]")
    page.wait_for_selector("#report-form", state="attached")
    answer_checklist(page)
    page.check("#evaluation-compliant")
    page.fill("#notes", "North gate locked; walked in from Williams Street")
    page.fill("#observed_weather", OBSERVED_WEATHER)  # (e) the station's weather is pending
    draw_signature(page)
    return page.url.rsplit("/", 1)[-1].split("#")[0]


def test_on_a_shared_tablet_the_next_person_sees_nothing_the_first_one_keeps_and_it_all_waits_for_them(
        site, server, page, context, make):
    """Inspector A holds their permit, types a new report and saves another with no server; A's sign-in expires
    without signing out and B signs in: B sees none of A's permits, pages, typing or posts, online or off. When
    A signs in again, all of it is there and A's post is sent, as A's."""
    inspector, permit = site
    other = make.user("inspector")  # not on A's permit: its pages answer them 404
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    walk_through = new_report_url(server, permit, "walk_through")
    page.goto(walk_through)
    wait_for_form(page)
    page.fill("#notes", "Swale side slopes still bare")
    wait_for_drafts(page, lambda kept: any(d["fields"].get("notes") for d in kept))
    context.set_offline(True)
    page.goto(new_report_url(server, permit))
    saved_id = fill_erosion_form(page, [])
    page.click("#save-draft")
    page.wait_for_selector("#offline-message:has-text('Saved on this device — will sync')")
    [item] = outbox(page)

    context.clear_cookies()  # A's sign-in expires on site; A never signed out
    context.set_offline(False)
    sign_in_controlled(page, server, other)
    page.goto(f"{server.url}/offline/")
    page.wait_for_selector("#held-list li.empty")
    assert permit.number not in page.inner_text("main")
    page.wait_for_selector("#outbox-badge[data-count='0']", state="attached")
    page.goto(f"{server.url}/outbox")
    expect(page.locator("#outbox-others")).to_contain_text("1 more item(s) saved on this device by someone else")
    expect(page.locator(f"#item-{item['id']}")).to_have_count(0)

    context.set_offline(True)
    for url in (f"{server.url}/permits/{permit.id}", walk_through, new_report_url(server, permit)):
        page.goto(url)
        expect(page.locator("main")).to_contain_text(OFFLINE_PAGE)
        assert page.locator("#report-form").count() == 0 and permit.number not in page.inner_text("main")
    assert _count() == 0

    context.set_offline(False)
    context.clear_cookies()
    sign_in_controlled(page, server, inspector)  # A again: A's outbox goes, A's held pages and typing are there
    wait_for_outbox(page, lambda items: not items)
    [saved] = _reports()
    assert (saved.id, saved.status, saved.inspector_id) == (saved_id, "draft", inspector.id)
    page.goto(f"{server.url}/offline/")
    expect(page.locator(f"#held-{permit.id}")).to_contain_text(permit.number)
    context.set_offline(True)
    page.goto(f"{server.url}/permits/{permit.id}")
    assert permit.number in page.inner_text("h1")
    page.goto(walk_through)
    wait_for_form(page)
    expect(page.locator("#notes")).to_have_value("Swale side slopes still bare")


def test_a_form_opened_under_one_sign_in_and_sent_under_anothers_is_refused_and_kept_for_its_author(
        site, server, page, context, make):
    """A's report page is still open when A's sign-in expires and B signs in on the same tablet (another tab).
    Sent from A's page, the server refuses it as B's act with a page that says so; the device keeps it for A,
    and it goes once A signs in again, under A's name."""
    inspector, permit = site
    other = make.user("inspector")
    sign_in_controlled(page, server, inspector)
    report_id = _online_draft(page, server, permit)

    second = _expired_then_signed_in_in_another_tab(context, server, other)
    page.click("#submit-report")
    expect(page.locator("#refusal")).to_contain_text("someone else was signed in")
    expect(page.locator("[data-kept-note]")).to_be_visible()
    [item] = outbox(page)
    assert item["state"] == "waiting" and item["url"] == f"/inspections/{report_id}/submit"
    assert _reports()[0].status == "draft"
    second.goto(f"{server.url}/outbox")
    expect(second.locator("#outbox-others")).to_contain_text("1 more item(s) saved on this device by someone else")
    second.evaluate("Outbox.syncNow()")
    assert [i["state"] for i in outbox(second)] == ["waiting"] and _reports()[0].status == "draft"

    context.clear_cookies()
    sign_in_controlled(second, server, inspector)
    wait_for_outbox(second, lambda items: not items)
    [report] = _reports()
    assert (report.id, report.status, report.inspector_id) == (report_id, "submitted", inspector.id)
    assert report.notes == "North gate locked; walked in from Williams Street"


def test_signing_out_says_what_of_ones_work_still_waits_and_keeps_it(site, server, page):
    """A report refused by the server waits in the outbox to be corrected: signing out says so, and drops nothing."""
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    fill_erosion_report(page, [], evaluation="compliant")  # "in compliance" with a violation: the server refuses it
    server.start()
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    [item] = wait_for_outbox(page, lambda items: [i["state"] for i in items] == ["refused"])

    page.click("header button:has-text('Log out')")
    expect(page.locator("#signed-out-waiting")).to_contain_text(
        "1 item(s) you saved on this device have not reached the server yet")
    assert [i["id"] for i in outbox(page)] == [item["id"]]
    sign_in_controlled(page, server, inspector)
    page.goto(f"{server.url}/outbox")
    expect(page.locator(f"#item-{item['id']} [data-item-state]")).to_have_text("Refused")
    expect(page.locator("#signed-out-waiting")).to_be_hidden()


@pytest.mark.parametrize("offline", ["browser", "server_stopped"])
def test_log_out_with_no_connection_signs_out_on_the_device_and_tells_the_server_first_when_it_is_back(
        offline, site, server, page, context):
    """Log out tapped with no signal did nothing on screen, and once the signal came back the tablet was still
    signed in as the one who believed they had signed out: the next person's work would go in their name. Now
    the device signs them out at once (their held pages are shown to no one, their saved work waits for them),
    says so, and the first request that reaches the server again signs them out there before anything else."""
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    page.goto(f"{server.url}/permits/{permit.id}")
    context.set_offline(True) if offline == "browser" else server.stop()
    page.click("header button:has-text('Log out')")
    expect(page.locator("[data-signed-out-note]")).to_contain_text("Signed out on this device")
    page.goto(f"{server.url}/permits/{permit.id}")
    expect(page.locator("h1")).to_have_text(OFFLINE_PAGE)  # held for them: shown to no one now

    context.set_offline(False) if offline == "browser" else server.start()
    page.goto(f"{server.url}/permits/{permit.id}")
    page.wait_for_selector("input[name=password]")  # the server asks who is there: they were signed out first
    assert page.evaluate("fetch('/sync/session').then((r) => r.json())")["user"] is None


@pytest.mark.parametrize("connection", ["online", "offline"])
def test_back_after_submitting_a_new_report_and_submit_again_gives_the_first_answer(
        connection, site, server, page, context):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    if connection == "offline":
        context.set_offline(True)
    page.goto(new_report_url(server, permit))
    made = fill_erosion_form(page, [jpeg(3)])
    if connection == "offline":
        submit(page)
    else:
        page.click("#submit-report")
        page.wait_for_selector("#report-status:has-text('Submitted')")

    page.go_back()
    wait_for_form(page)
    assert device_id(page) == made  # the same report, not a new one
    expect(page.locator("#report-sent")).to_be_visible()
    draw_signature(page)
    page.click("#submit-report")
    if connection == "offline":
        page.wait_for_selector("#offline-message:has-text('Saved on this device — will sync')")
        assert len(outbox(page)) == 1
        context.set_offline(False)
        page.goto(f"{server.url}/outbox")
        wait_for_outbox(page, lambda items: not items)
    else:
        page.wait_for_selector("#report-status:has-text('Submitted')")
        assert page.url == f"{server.url}/inspections/{made}"
    [report] = _reports()
    assert (report.id, report.status) == (made, "submitted")


def test_a_sign_in_that_expires_while_a_report_is_filled_in_costs_nothing(site, server, page, context, make):
    """Online, the sign-in expires while the inspector fills in a draft. *Sign and submit* is kept on the
    device and the page asks to sign in again; someone else signing in does not send it; its author signing
    in sends it, once."""
    inspector, permit = site
    other = make.user("inspector")
    sign_in_controlled(page, server, inspector)
    report_id = _online_draft(page, server, permit)

    context.clear_cookies()  # the sign-in expired while the inspector was typing
    page.click("#submit-report")
    expect(page.locator("#refusal")).to_contain_text("Your sign-in has expired")
    expect(page.locator("[data-kept-note]")).to_be_visible()
    [item] = outbox(page)
    assert item["state"] == "waiting"

    page.click("[data-kept-note] a:has-text('Sign in again')")
    _sign_in_through_the_form(page, other)  # someone else: it is not theirs to send
    page.goto(f"{server.url}/outbox")
    page.evaluate("Outbox.syncNow()")
    assert [i["state"] for i in outbox(page)] == ["waiting"] and _reports()[0].status == "draft"

    context.clear_cookies()
    page.goto(f"{server.url}/login")
    _sign_in_through_the_form(page, inspector)
    wait_for_outbox(page, lambda items: not items)
    [report] = _reports()
    assert (report.id, report.status, report.inspector_id) == (report_id, "submitted", inspector.id)
    assert report.notes == "North gate locked; walked in from Williams Street"


def test_a_close_out_sent_in_place_after_the_sign_in_expired_is_kept_and_goes_after_signing_in(
        site, open_action, server, page, context):
    inspector, _permit = site
    sign_in_controlled(page, server, inspector)
    page.goto(f"{server.url}/inspections/{open_action.finding.inspection_id}")
    form = f"form[action='/actions/{open_action.id}/close']"
    done = (utcnow() - dt.timedelta(minutes=30)).astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    page.fill(f"{form} input[name$='-completed_at']", done)
    page.fill(f"{form} textarea[name$='-note']", "Fence reset and re-trenched")

    context.clear_cookies()
    page.click(f"{form} button[type=submit]")  # htmx posts it in place
    expect(page.locator("[data-kept-note]")).to_be_visible()
    [item] = outbox(page)
    assert item["url"] == f"/actions/{open_action.id}/close"
    page.click("[data-kept-note] a:has-text('Sign in again')")
    _sign_in_through_the_form(page, inspector)
    wait_for_outbox(page, lambda items: not items)
    db.session.expire_all()
    closed = db.session.get(CorrectiveAction, open_action.id)
    assert (closed.status, closed.closeout_note) == ("completed", "Fence reset and re-trenched")


def test_the_same_new_report_in_two_tabs_offline_is_one_report_and_the_other_tab_says_so(
        site, server, page, context):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    url = new_report_url(server, permit)
    page.goto(url)
    wait_for_form(page)
    page.fill("#notes", "Started in the first tab")
    wait_for_drafts(page, lambda kept: any(d["fields"].get("notes") == "Started in the first tab" for d in kept))

    second = context.new_page()
    second.goto(url)
    wait_for_form(second)
    assert device_id(second) == device_id(page)  # one report, whichever tab it is typed in
    expect(second.locator("#notes")).to_have_value("Started in the first tab")

    page.bring_to_front()  # back to the first tab, as a person would (a hidden tab's frames wait)
    made = fill_erosion_form(page, [])
    submit(page)
    second.bring_to_front()
    expect(second.locator("#report-sent")).to_be_visible()
    answer_checklist(second)
    second.check("#evaluation-compliant")
    draw_signature(second)
    second.click("#submit-report")
    second.wait_for_selector("#offline-message:has-text('Saved on this device — will sync')")
    assert len(outbox(second)) == 1

    context.set_offline(False)
    second.goto(f"{server.url}/outbox")
    wait_for_outbox(second, lambda items: not items)
    [report] = _reports()
    assert (report.id, report.status, report.evaluation) == (made, "submitted", "violations")


def test_a_double_tap_on_submit_with_no_server_is_one_report(site, server, page, context):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    page.goto(new_report_url(server, permit))
    made = fill_erosion_form(page, [])
    page.dblclick("#submit-report")
    page.wait_for_selector("#offline-message:has-text('Saved on this device — will sync')")
    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    wait_for_outbox(page, lambda items: not items)
    [report] = _reports()
    assert (report.id, report.status) == (made, "submitted")


def test_a_saved_draft_submitted_from_a_second_tab_is_refused_as_submitted(site, server, page, context):
    """A draft the server has, open in two tabs: the second Sign and submit is refused with the way to correct a
    submitted report, an amendment; one report."""
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    report_id = _online_draft(page, server, permit)
    second = context.new_page()
    second.goto(f"{server.url}/inspections/{report_id}")
    second.wait_for_selector("#report-form", state="attached")
    draw_signature(second)

    page.click("#submit-report")
    page.wait_for_selector("#report-status:has-text('Submitted')")
    second.click("#submit-report")
    expect(second.locator("main")).to_contain_text("To correct it, make an amendment")
    [report] = _reports()
    assert (report.id, report.status) == (report_id, "submitted")
    assert outbox(second) == []


def test_a_report_made_offline_takes_the_devices_gps(site, server, page, context):
    inspector, permit = site
    context.grant_permissions(["geolocation"], origin=server.url)
    context.set_geolocation({"latitude": 42.061234, "longitude": -72.513456, "accuracy": 8})
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    page.goto(f"{server.url}/permits/{permit.id}")
    page.click("button[data-start=erosion_control]")  # the held new report, as a Start with no server
    wait_for_form(page)
    expect(page.locator("#report-form input[name=latitude]")).to_have_value("42.061234")
    made = fill_erosion_form(page, [])
    submit(page)

    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    wait_for_outbox(page, lambda items: not items)
    [report] = _reports()
    assert report.id == made
    assert (report.location_source, report.latitude, report.longitude) == ("device", 42.061234, -72.513456)


def test_a_report_page_left_open_while_a_colleague_used_the_tablet_still_sends_as_its_author(
        site, server, page, context, make):
    """The inspector fills a report in; in another tab they log out, a colleague logs in and out, and they log in
    again. *Sign and submit* on the report page goes through at once, as theirs."""
    inspector, permit = site
    colleague = make.user("inspector")
    sign_in_controlled(page, server, inspector)
    report_id = _online_draft(page, server, permit)

    _others_in_another_tab(context, server, colleague, inspector)

    page.click("#submit-report")
    expect(page.locator("#submit-report")).to_have_count(0)  # the submitted report, read-only
    expect(page.locator("#sign-in-needed")).to_have_count(0)
    [report] = _reports()
    assert (report.id, report.status, report.inspector_id) == (report_id, "submitted", inspector.id)
    assert outbox(page) == []


def test_a_report_page_older_than_its_authors_sign_in_is_kept_and_sent_by_itself(site, server, page, context):
    """The browser restarted (its session, and the report page's token, gone) and the inspector signed in again in
    another tab. *Sign and submit* on the old page is not refused (a 400 that keeps nothing) but kept on the device,
    and sent by itself at once, as theirs."""
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    report_id = _online_draft(page, server, permit)

    _expired_then_signed_in_in_another_tab(context, server, inspector)

    page.click("#submit-report")
    expect(page.locator("#sign-in-needed h1")).to_contain_text("the page is older than your sign-in")
    expect(page.locator("[data-kept-note]")).to_be_visible()
    wait_for_outbox(page, lambda items: not items)
    [report] = _reports()
    assert (report.id, report.status, report.inspector_id) == (report_id, "submitted", inspector.id)
    assert report.notes == "North gate locked; walked in from Williams Street"


def test_a_form_another_site_sends_here_is_never_kept_to_be_sent_again(site, server, page, context):
    """Another site's page posts a report form to the app, naming the signed-in inspector and a made-up token. The
    service worker sees that navigation too; had it kept the post, as it keeps one refused with a 401, its outbox
    would send it again with the inspector's own token. It goes to the server as it is, and nothing is kept."""
    import http.server
    import threading

    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    report_id = _online_draft(page, server, permit)
    forged = (f'<form method="post" action="{server.url}/inspections/{report_id}/submit">'
              f'<input name="csrf_token" value="made-up"><input name="posted_by" value="{inspector.id}">'
              f'<input name="idempotency_key" value="forged-0001"><input name="notes" value="Forged">'
              f'<button id="go">Win a prize</button></form>').encode()

    class Elsewhere(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(forged)

        def log_message(self, *args):
            pass

    other_site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Elsewhere)
    threading.Thread(target=other_site.serve_forever, daemon=True).start()
    try:
        attack = context.new_page()
        attack.goto(f"http://127.0.0.1:{other_site.server_address[1]}/")
        attack.click("#go")
        attack.wait_for_url(lambda url: url.startswith(server.url))
        expect(attack.locator("#refusal")).to_contain_text("opened before your latest sign-in")
        expect(attack.locator("[data-kept-note]")).to_be_hidden()
    finally:
        other_site.shutdown()
        other_site.server_close()
    page.goto(f"{server.url}/outbox")
    page.evaluate("Outbox.syncNow()")
    assert outbox(page) == []
    [report] = _reports()
    assert report.status == "draft" and report.notes != "Forged"



def test_a_button_of_a_page_left_open_from_someone_elses_sign_in_says_why_it_did_nothing(
        site, server, page, context, make):
    """The engineer's permit page stays open; a colleague signs in on the tablet. *Add area* on the engineer's page
    (a form sent in place) is refused, and said so beside it: before, htmx swapped nothing and the tap seemed lost."""
    inspector, permit = site
    colleague = make.user("inspector")
    sign_in_controlled(page, server, inspector)
    page.goto(f"{server.url}/permits/{permit.id}")
    _others_in_another_tab(context, server, colleague)

    form = page.locator(f"form[action='/permits/{permit.id}/areas']")
    form.locator("input[name='area-name']").fill("Lot 9")
    form.locator("input[name='area-acres']").fill("1")
    form.locator("button:has-text('Add area')").click()
    expect(page.locator("[data-refused-note]")).to_contain_text("The form could not be accepted")
    db.session.expire_all()
    assert [a.name for a in permit.areas] == ["Lot 1 pad"]
