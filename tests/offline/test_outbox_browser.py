"""Offline inspections in a real Chromium: held permits, the server's report form used with no server,
the outbox and its replay, with the browser set offline and with the server process really stopped
(the same port again after)."""
from __future__ import annotations

import datetime as dt

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection, PunchListItem
from inspect_app.inspections import services as inspections
from inspect_app.photos.models import Photo
from inspect_app.types import LOCAL_TZ

from tests.offline.offline_helpers import (
    WireFaults, add_finding, add_photos, answer_checklist, device_id, draw_signature, fill_erosion_form,
    fill_erosion_report, hold_permits, jpeg, keep_post, new_report_url, observe_weather, outbox, photo_file, sha256,
    sign_in_controlled, submit, wait_for_drafts, wait_for_form, wait_for_outbox, wait_until,
)

pytestmark = pytest.mark.browser


def _go_offline(kind: str, server, context) -> None:
    if kind == "browser":
        context.set_offline(True)
    else:
        server.stop()


def _come_back(kind: str, server, context) -> None:
    if kind == "browser":
        context.set_offline(False)
    else:
        server.start()


def _stored(inspection_id: str) -> Inspection | None:
    db.session.expire_all()
    return db.session.get(Inspection, inspection_id)


def _finding(description: str) -> Finding:
    return db.session.scalars(select(Finding).where(Finding.description == description)).one()


@pytest.mark.parametrize("offline", ["browser", "server_stopped"])
def test_an_inspection_made_offline_arrives_once_with_its_photos_and_finding(offline, site, server, page, context):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    assert permit.number in page.inner_text("#held-list")
    assert page.get_attribute(f"#held-{permit.id} [data-held-at]", "data-held-at")

    _go_offline(offline, server, context)
    page.goto(f"{server.url}/permits/{permit.id}")
    assert permit.number in page.inner_text("h1")
    page.click("button[data-start=erosion_control]")  # the worker answers with the held new report form
    wait_for_form(page)
    assert f"/permits/{permit.id}/inspections/new/erosion_control" in page.url
    photos = [jpeg(1), jpeg(2), jpeg(3)]
    inspection_id = fill_erosion_report(page, photos)
    [item] = outbox(page)
    assert item["url"] == f"/inspections/{inspection_id}/submit"

    page.reload()
    page.wait_for_selector("#outbox-badge[data-count='1']")
    page.goto(f"{server.url}/outbox")
    assert f"/inspections/{inspection_id}/submit" in page.inner_text(f"#item-{item['id']}")
    assert _stored(inspection_id) is None

    _come_back(offline, server, context)
    if offline == "server_stopped":
        page.click("#sync-now")  # no `online` event when a server comes back
    wait_for_outbox(page, lambda items: not items)
    page.wait_for_selector("#outbox-badge[data-count='0']", state="attached")

    report = _stored(inspection_id)
    assert report is not None and report.status == "submitted" and report.permit_id == permit.id
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 1
    finding = _finding("Silt fence down at the east line")
    assert finding.inspection_id == inspection_id and finding.is_violation
    assert [a.description for a in db.session.scalars(select(CorrectiveAction))] == ["Reset and re-trench the silt fence"]
    stored = db.session.scalars(select(Photo).where(Photo.permit_id == permit.id)).all()
    assert sorted(p.original_sha256 for p in stored) == sorted(sha256(p) for p in photos)
    assert {p.original_sha256: p.finding_id for p in stored}[sha256(photos[0])] is None
    assert sum(p.finding_id == finding.id for p in stored) == 2


def test_a_draft_saved_offline_survives_a_closed_tab_and_arrives(site, server, page, context):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    page.goto(new_report_url(server, permit))
    wait_for_form(page)
    inspection_id = device_id(page)
    page.fill("#notes", "Wet morning, access from the north gate")
    page.check("#answer-perimeter_controls-site-no")
    add_finding(page, "Inlet protection missing", violation=False)
    page.click("#save-draft")
    page.wait_for_selector("#offline-message:has-text('Saved on this device — will sync')")

    page.close()
    again = context.new_page()
    context.set_offline(False)
    again.goto(f"{server.url}/outbox")
    wait_for_outbox(again, lambda items: not items)
    draft = _stored(inspection_id)
    assert draft.status == "draft" and draft.notes == "Wet morning, access from the north gate"
    assert {(a.item_key, a.answer) for a in draft.answers} >= {("perimeter_controls", "no")}
    assert _finding("Inlet protection missing").inspection_id == inspection_id
    again.goto(f"{server.url}/inspections/{inspection_id}")  # the draft, to go on with
    assert again.input_value("#notes") == "Wet morning, access from the north gate"
    assert again.is_checked("#answer-perimeter_controls-site-no")
    assert "Inlet protection missing" in again.inner_text("#findings")


def test_a_draft_survives_a_reload_and_a_closed_tab(site, server, page, context):
    """What is typed and not yet saved is kept on the device: after a reload, and in a new tab with the
    server stopped (the held form). A photo chosen but not saved is not kept: the picker is empty again and
    the photo must be chosen again. Once the report is posted, the typing is forgotten."""
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    url = new_report_url(server, permit)
    page.goto(url)
    wait_for_form(page)
    page.fill("#notes", "Wet morning, access from the north gate")
    page.check("#answer-perimeter_controls-site-no")
    finding = add_finding(page, "Inlet protection missing", violation=False)
    add_photos(page, "#photos", [photo_file("site.jpg", jpeg(1))])
    wait_for_drafts(page, lambda kept: any(d["fields"].get("notes") == "Wet morning, access from the north gate"
                                           and d["fields"].get(f"{finding}-location") == "East line" for d in kept))

    page.reload()
    wait_for_form(page)
    expect(page.locator(f"[name={finding}-description]")).to_have_value("Inlet protection missing")
    assert page.input_value("#notes") == "Wet morning, access from the north gate"
    assert page.is_checked("#answer-perimeter_controls-site-no")
    assert page.eval_on_selector("#photos", "input => input.files.length") == 0  # choose the photo again

    page.close()
    server.stop()
    again = context.new_page()
    again.goto(url)  # the held form, from the device
    wait_for_form(again)
    expect(again.locator(f"[name={finding}-description]")).to_have_value("Inlet protection missing")
    assert again.input_value(f"[name={finding}-location]") == "East line"
    assert again.input_value("#notes") == "Wet morning, access from the north gate"
    assert again.is_checked("#answer-perimeter_controls-site-no")

    again.click("#save-draft")  # kept by the outbox now: the typing is forgotten
    again.wait_for_selector("#offline-message:has-text('Saved on this device — will sync')")
    wait_for_drafts(again, lambda kept: not any(d["fields"].get("notes") for d in kept))
    again.goto(url)
    wait_for_form(again)
    assert again.input_value("#notes") == "" and again.locator(f"[name={finding}-description]").count() == 0


def test_what_one_person_typed_is_not_put_into_the_next_persons_report_on_a_shared_tablet(
        site, server, page, context, make):
    """Unsaved typing is its author's: on a shared tablet, the next person's new report of the same permit
    opens empty (it would otherwise be sent as their act); the author finds theirs again when back."""
    inspector, permit = site
    other = make.user("inspector")
    permits.assign(None, permit, other, "erosion_control_inspector")
    db.session.commit()
    sign_in_controlled(page, server, inspector)
    url = new_report_url(server, permit)
    page.goto(url)
    wait_for_form(page)
    page.fill("#notes", "Wet morning, access from the north gate")
    kept_as = page.get_attribute("#report-form", "data-draft")
    wait_for_drafts(page, lambda kept: [d["id"] for d in kept if d["fields"].get("notes")] == [kept_as])

    context.clear_cookies()  # the tablet is handed on, and the next person signs in
    sign_in_controlled(page, server, other)
    page.goto(url)
    wait_for_form(page)
    # Their form keeps its typing under another name than the typing on the device, which is not theirs.
    assert page.get_attribute("#report-form", "data-draft") != kept_as
    assert page.input_value("#notes") == ""

    context.clear_cookies()
    sign_in_controlled(page, server, inspector)
    page.goto(url)
    wait_for_form(page)
    expect(page.locator("#notes")).to_have_value("Wet morning, access from the north gate")


def test_the_same_item_replayed_after_a_lost_answer_is_stored_once(site, server, page, app):
    inspector, permit = site
    faults = WireFaults(app.wsgi_app)
    app.wsgi_app = faults
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    inspection_id = fill_erosion_report(page, [jpeg(11)])
    [item] = outbox(page)

    faults.drop_form_answers = 1  # the server applies the post, the answer never reaches the tablet
    server.start()
    page.goto(f"{server.url}/outbox")
    wait_until(page, lambda: faults.dropped, "the outbox never sent the report")
    page.wait_for_selector("#outbox-status [data-say=unreachable]")  # the try is over, the answer lost
    assert _stored(inspection_id) is not None
    assert [i["id"] for i in outbox(page)] == [item["id"]]  # not confirmed: it stays

    page.click("#sync-now")
    wait_for_outbox(page, lambda items: not items)
    assert faults.form_posts == 2
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 1
    assert db.session.scalar(select(func.count()).select_from(Finding)) == 1
    assert db.session.scalar(select(func.count()).select_from(Photo)) == 1


def _report_kept_offline(site, server, page, context, photo: bytes) -> tuple[str, dict]:
    """The site's inspector, signed in, holds their permits, goes offline and submits a new erosion-control
    report: its id and the one item the device's outbox then holds."""
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    page.goto(new_report_url(server, permit))
    inspection_id = fill_erosion_report(page, [photo])
    [item] = outbox(page)
    return inspection_id, item


def test_a_session_that_expired_offline_loses_nothing_and_syncs_after_logging_in(site, server, page, context):
    inspector, _permit = site
    inspection_id, item = _report_kept_offline(site, server, page, context, jpeg(21))

    context.clear_cookies()  # the login expired while the tablet was offline
    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    page.wait_for_selector("#outbox-login:has-text('log in again')")
    assert [i["id"] for i in outbox(page)] == [item["id"]]
    assert _stored(inspection_id) is None

    page.click("#outbox-login a")
    page.fill("input[name=email]", inspector.email)
    page.fill("input[name=password]", "correct horse battery")
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login" not in url)
    wait_for_outbox(page, lambda items: not items)
    assert _stored(inspection_id).status == "submitted"


def test_a_report_kept_on_a_shared_tablet_waits_for_its_author_and_arrives_when_they_sign_in(
        site, server, page, context, make):
    # The server refuses a post filled in by someone else than who is signed in (401, idempotency.SignInNeeded);
    # the next person's outbox leaves it waiting, not refused for good: it is its author's, sent by them.
    inspector, permit = site
    inspection_id, item = _report_kept_offline(site, server, page, context, jpeg(41))

    context.clear_cookies()  # the tablet is handed on, and the next person signs in
    context.set_offline(False)
    sign_in_controlled(page, server, make.user("inspector"))
    page.goto(f"{server.url}/outbox")
    page.evaluate("Outbox.syncNow()")
    assert [(i["id"], i["state"]) for i in outbox(page)] == [(item["id"], "waiting")]
    assert _stored(inspection_id) is None
    # Their outbox does not show it (nor what it is about), only that one waits for someone else.
    expect(page.locator("#outbox-others")).to_contain_text("1 more item(s) saved on this device by someone else")
    expect(page.locator(f"#item-{item['id']}")).to_have_count(0)
    assert inspection_id not in page.inner_text("#main") and permit.number not in page.inner_text("#main")

    context.clear_cookies()
    sign_in_controlled(page, server, inspector)
    wait_for_outbox(page, lambda items: not items)
    assert _stored(inspection_id).status == "submitted"


def test_a_post_kept_before_posts_named_their_author_waits_to_be_claimed_and_a_gone_form_is_refused_with_its_page(
        site, server, page):
    # A post of the punch list's former form, kept by an earlier release: it names no one (no posted_by).
    inspector, permit = site
    walk = inspections.start_inspection(inspector, permit, "walk_through", fetch_weather=False)
    db.session.commit()
    sign_in_controlled(page, server, inspector)
    page.goto(f"{server.url}/outbox")
    kept = keep_post(page, f"/inspections/{walk.id}/punch",
                     {"csrf_token": "from a page of the earlier release", "newpunch-description": "Loam the swale"})

    page.evaluate("Outbox.syncNow()")  # never sent as whoever is signed in
    assert [(i["id"], i["state"]) for i in outbox(page)] == [(kept, "waiting")]
    page.evaluate("Outbox.refresh()")
    expect(page.locator(f"#item-{kept} [data-item-state]")).to_have_text("Whose? Not sent")
    expect(page.locator("#outbox-unclaimed")).to_contain_text("1 item(s) were saved on this device before")

    page.click("#claim-all")  # the inspector says it is theirs: sent, and refused (410) with the server's page
    wait_for_outbox(page, lambda items: [(i["id"], i["state"]) for i in items] == [(kept, "refused")])
    page.evaluate("Outbox.syncNow()")  # a refused item is not sent again
    assert [(i["id"], i["state"]) for i in outbox(page)] == [(kept, "refused")]
    page.goto(f"{server.url}/outbox")
    page.click(f"#item-{kept} [data-correct]")
    expect(page.locator("#punch-form-gone")).to_contain_text("This punch-list item was not added")
    expect(page.locator("#punch-typed")).to_have_text("Loam the swale")
    page.click("#punch-form-gone button")  # opens the report, and takes the item out of the outbox
    page.wait_for_selector("#punch-list")
    assert outbox(page) == []
    assert db.session.scalar(select(func.count()).select_from(PunchListItem)) == 0


def test_a_rejected_item_stays_with_its_reason_while_the_rest_sync(site, server, page):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    # "In compliance" with a violation among the findings: the server refuses this one.
    bad_id = fill_erosion_report(page, [jpeg(31)], evaluation="compliant")
    page.goto(new_report_url(server, permit))
    good_id = fill_erosion_report(page, [jpeg(32)])
    bad, good = sorted(outbox(page), key=lambda i: i["created_at"])

    server.start()
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: [i["id"] for i in items] == [bad["id"]] and items[0]["state"] == "refused")
    assert _stored(good_id).status == "submitted"
    assert _stored(bad_id) is None
    page.goto(f"{server.url}/outbox")
    page.wait_for_selector(f"#item-{bad['id']} [data-reasons]")

    # Opened from the outbox: the server's own form, its reason beside the field; corrected and sent.
    page.click(f"#item-{bad['id']} [data-correct]")
    page.wait_for_selector("#error-summary")
    assert "violation" in page.inner_text("#evaluation").lower()
    assert page.is_checked("#evaluation-compliant")
    assert "1 photo(s) already uploaded are kept" in page.inner_text("#new-parts")
    page.check("#evaluation-violations")
    page.fill("#corrective_steps", "Reset the silt fence by tomorrow evening.")
    draw_signature(page)
    page.click("#submit-report")
    page.wait_for_selector("#report-status:has-text('Submitted')")
    corrected = _stored(bad_id)
    assert corrected.status == "submitted" and corrected.evaluation == "violations"
    assert len(db.session.scalars(select(Photo).where(Photo.inspection_id == bad_id)).all()) == 1
    page.goto(f"{server.url}/outbox")
    assert outbox(page) == []


def test_a_photo_upload_broken_off_half_way_resumes_where_it_stopped(site, server, page, app):
    inspector, permit = site
    faults = WireFaults(app.wsgi_app)
    app.wsgi_app = faults
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    big = jpeg(41, size=(1500, 1320), noise=True)  # a camera-sized photo: three 1 MiB chunks
    assert len(big) > 2 * 1024 * 1024
    fill_erosion_report(page, [big])

    faults.cut_blob_after = 1  # the first chunk arrives; the line drops in the middle of the second
    server.start()
    page.goto(f"{server.url}/outbox")
    wait_until(page, lambda: faults.cut_blob_after is None, "the upload never reached the cut")
    # The outbox tries again by itself (timer, page load, Sync now); whichever try comes first must
    # start from what the server holds.
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: not items)
    # Resumed where the server stopped: nothing sent twice. (A page left in the middle of a chunk breaks
    # it off: the bytes that arrived are kept, and the next chunk starts after them.)
    faults.assert_sent_once(sha256(big), len(big))
    assert len([sha for sha, _, _ in faults.blob_puts if sha == sha256(big)]) >= 3
    stored = db.session.scalar(select(Photo).where(Photo.original_sha256 == sha256(big)))
    assert stored is not None


def test_a_corrective_action_closed_with_the_server_stopped_is_recorded_after_sync(site, open_action, server, page):
    inspector, permit = site
    action = open_action
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)

    server.stop()
    page.goto(f"{server.url}/permits/{permit.id}")
    page.click("#open-actions a:has-text('Reset the silt fence')")  # the report is held on the device
    form = f"form[action='/actions/{action.id}/close']"
    page.fill(f"{form} input[name$='-completed_at']", (dt.datetime.now(LOCAL_TZ) - dt.timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M"))
    page.fill(f"{form} textarea[name$='-note']", "Fence reset and re-trenched")
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector("[data-offline-saved]:has-text('Saved on this device — will sync')")
    [item] = outbox(page)
    assert item["url"] == f"/actions/{action.id}/close"

    server.start()
    page.goto(f"{server.url}/outbox")
    wait_for_outbox(page, lambda items: not items)
    db.session.expire_all()
    closed = db.session.get(CorrectiveAction, action.id)
    assert (closed.status, closed.closeout_note) == ("completed", "Fence reset and re-trenched")


# A real (1x1) GIF: what a gallery pick of a screenshot gives an `accept="image/*"` picker; the server takes no GIF.
GIF = (b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,"
       b"\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")


def test_a_photo_the_server_will_not_take_refuses_its_report_only_and_the_reports_behind_it_arrive(
        site, server, page, context):
    """A report kept offline with a GIF: /sync/blobs refuses the file (415) for good. The device counted that as
    "the server cannot be reached", so the report was tried again for ever and every post kept after it (a signed
    report) waited behind it. Now the report goes with the file itself, the server refuses it with its reason
    beside the photo, the device keeps it as refused to correct, and the reports behind it arrive."""
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    page.goto(new_report_url(server, permit))
    gif_id = fill_erosion_form(page, [])
    page.set_input_files("#photos", [{"name": "screenshot.gif", "mimeType": "image/gif", "buffer": GIF}])
    page.click("#submit-report")
    page.wait_for_url("**/offline/saved")
    page.goto(new_report_url(server, permit))
    good_id = fill_erosion_report(page, [jpeg(33)])
    gif, _ = sorted(outbox(page), key=lambda i: i["created_at"])

    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: [(i["id"], i["state"]) for i in items] == [(gif["id"], "refused")])
    assert _stored(good_id).status == "submitted"
    assert _stored(gif_id) is None
    page.goto(f"{server.url}/outbox")
    page.click(f"#item-{gif['id']} [data-correct]")
    page.wait_for_selector("#error-summary")
    assert "GIF" in page.inner_text("main")


def test_a_refused_offline_report_corrected_and_refused_again_stays_in_the_outbox(make, server, page, context):
    """A report made offline, refused by the server from the outbox, opened with "Open and correct" and sent again
    still incomplete: the second refusal took it out of the outbox while the server kept nothing of it, and leaving
    that page lost the whole report. It stays in the outbox as last sent, refused, to correct again."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    page.goto(new_report_url(server, permit))
    wait_for_form(page)
    made = page.get_attribute("#report-form", "action").rsplit("/", 1)[-1]
    answer_checklist(page)
    page.fill("#notes", "North gate locked; walked in from Williams Street")
    observe_weather(page)
    draw_signature(page)  # no evaluation: the server refuses it
    submit(page)

    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    [item] = wait_for_outbox(page, lambda items: len(items) == 1 and items[0]["state"] == "refused")
    page.goto(f"{server.url}/outbox")
    page.click(f"#item-{item['id']} [data-correct]")
    page.wait_for_selector("#error-summary")
    expect(page.locator("#notes")).to_have_value("North gate locked; walked in from Williams Street")

    # Sent again without the evaluation (the inspector fixed something else first): refused again.
    page.click("#submit-report")
    page.wait_for_selector("#error-summary")
    page.wait_for_timeout(1_000)

    db.session.expire_all()
    assert db.session.get(Inspection, made) is None  # refused: the server kept nothing
    page.goto(f"{server.url}/outbox")
    [again] = outbox(page)
    assert again["state"] == "refused"
    page.click(f"#item-{again['id']} [data-correct]")
    page.wait_for_selector("#error-summary")
    expect(page.locator("#notes")).to_have_value("North gate locked; walked in from Williams Street")
    page.check("#evaluation-compliant")
    draw_signature(page)
    page.click("#submit-report")
    page.wait_for_url(f"**/inspections/{made}")
    db.session.expire_all()
    assert db.session.get(Inspection, made).status == "submitted"
    page.goto(f"{server.url}/outbox")
    assert outbox(page) == []
