"""The repeating parts of the report form used with no server, and the close-out's evidence photo, in a real
Chromium with the server process really stopped (and started again on the same port): a walk-through's punch
list, an erosion-control report's typed controls and their answers, a photo marked up on the report, and a
corrective action closed with a photo. Also the close-out photo chosen online, and the "Offline" link."""
from __future__ import annotations

import datetime as dt
import io

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Inspection, PunchListItem
from inspect_app.photos.models import Photo
from inspect_app.types import LOCAL_TZ, utcnow

from tests.offline.offline_helpers import (
    answer_checklist, device_id, draw_signature, hold_permits, jpeg, new_report_url, outbox, photo_file, sha256,
    observe_weather, sign_in_controlled, submit, wait_for_form, wait_for_outbox,
)

browser = pytest.mark.browser


def _stored(model, record_id: str):
    db.session.expire_all()
    return db.session.get(model, record_id)


def _sync(page, server) -> None:
    """Start the server again (no `online` event comes) and wait until the outbox is empty."""
    server.start()
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: not items)


def _add_part(page, template: str) -> object:
    """Add a repeating part of the report form; returns it (a fieldset)."""
    parts = page.locator(f"[data-list-of={template}] [data-part]")
    count = parts.count()
    page.click(f"[data-add={template}]")
    expect(parts).to_have_count(count + 1)
    return parts.last


def _done_half_an_hour_ago() -> str:
    return (dt.datetime.now(LOCAL_TZ) - dt.timedelta(minutes=30)).strftime("%Y-%m-%dT%H:%M")  # the town's clock


@browser
def test_a_walk_through_punch_list_made_with_the_server_stopped_arrives_and_is_open_at_the_final(site, server, page):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit, "walk_through"))
    wait_for_form(page)
    made = device_id(page)
    for description in ("Loam and seed the swale side slopes", "Remove the silt fence at the north edge",
                        "Typed by mistake"):
        _add_part(page, "punch-template").locator("input").fill(description)
    page.locator("[data-list-of=punch-template] [data-part]").nth(2).locator("[data-remove]").click()
    expect(page.locator("[data-list-of=punch-template] [data-part]")).to_have_count(2)
    answer_checklist(page)
    page.check("#evaluation-compliant")
    observe_weather(page)
    draw_signature(page)
    submit(page)
    assert len(outbox(page)) == 1

    _sync(page, server)
    walk_through = _stored(Inspection, made)
    assert walk_through.status == "submitted" and walk_through.type == "walk_through"
    stored = db.session.scalars(select(PunchListItem).where(PunchListItem.walk_through_id == walk_through.id)).all()
    assert sorted(p.description for p in stored) == [
        "Loam and seed the swale side slopes", "Remove the silt fence at the north edge"]

    # The final inspection, started online, asks how each of them was resolved.
    page.goto(f"{server.url}/permits/{permit.id}")
    page.click("button[data-start=final]")
    page.wait_for_selector("#final-part")
    for item in stored:
        assert page.locator(f"#final-part textarea#punch-{item.id}").count() == 1
    assert "Loam and seed the swale side slopes" in page.inner_text("#final-part")
    assert "Remove the silt fence at the north edge" in page.inner_text("#final-part")


@browser
def test_a_typed_control_answered_with_the_server_stopped_arrives_with_its_answer(site, server, page):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    wait_for_form(page)
    made = device_id(page)
    control = _add_part(page, "control-template")
    control.locator("input[name^=control-new-]").fill("Wattle, west slope")
    control_id = control.locator("input[name^=control-new-]").get_attribute("name").removeprefix("control-new-")
    assert control.locator("input[type=radio][value=yes]").count() == 3  # installed, maintained, effective

    answer_checklist(page)
    for key in ("control_installed", "control_maintained"):
        page.check(f"#answer-{key}-{control_id}-yes")
    page.check(f"#answer-control_effective-{control_id}-no")
    page.fill(f"#note-control_effective-{control_id}", "Undercut at the toe")
    # A "no" comes with its fix: the repair, the date first observed and a corrective action (CGP 2022 Part 5.1).
    fix = f"#fix-control_effective-{control_id}"
    page.click(f"{fix} summary")
    page.fill(f"{fix}-repair", "Re-stake the wattle")
    page.fill(f"{fix}-first_observed", utcnow().astimezone(LOCAL_TZ).date().isoformat())
    page.select_option(f"{fix}-kind", "routine_maintenance")
    page.fill(f"{fix}-owner_name", "Site contractor")
    page.check("#evaluation-violations")
    page.fill("#corrective_steps", "Re-stake the wattle on the west slope.")
    observe_weather(page)
    draw_signature(page)
    submit(page)

    _sync(page, server)
    report = _stored(Inspection, made)
    assert report.status == "submitted"
    assert report.details["controls"] == [{"id": control_id, "name": "Wattle, west slope"}]
    answers = {(a.item_key, a.subject_id): (a.answer, a.note) for a in report.answers}
    assert answers[("control_effective", control_id)] == ("no", "Undercut at the toe")
    assert answers[("control_installed", control_id)] == ("yes", None)
    [action] = db.session.scalars(select(CorrectiveAction).where(CorrectiveAction.permit_id == permit.id)).all()
    assert report.details["fixes"][f"control_effective-{control_id}"]["action_id"] == action.id
    page.goto(f"{server.url}/inspections/{report.id}")
    assert "Undercut at the toe" in page.inner_text(f"#answer-control_effective-{control_id}")


@browser
def test_a_close_out_with_its_photo_made_with_the_server_stopped_arrives_with_the_photo_byte_identical(
        site, open_action, server, page):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(f"{server.url}/permits/{permit.id}")
    page.click("#open-actions a:has-text('Reset the silt fence')")  # the report is held on the device
    form = f"form[action='/actions/{open_action.id}/close']"
    evidence = jpeg(51)
    page.fill(f"{form} input[name$='-completed_at']", _done_half_an_hour_ago())
    page.set_input_files(f"{form} input[type=file]", [photo_file("fence-reset.jpg", evidence)])
    page.fill(f"{form} textarea[name$='-note']", "Fence reset and re-trenched")
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector("[data-offline-saved]:has-text('Saved on this device — will sync')")
    [item] = outbox(page)
    assert item["url"] == f"/actions/{open_action.id}/close"
    page.goto(f"{server.url}/outbox")
    page.wait_for_selector(f"#item-{item['id']}")  # the list is drawn from IndexedDB after the page loads
    assert page.locator(f"#item-{item['id']} img").count() == 1  # the photo waits on the device

    _sync(page, server)
    closed = _stored(CorrectiveAction, open_action.id)
    assert (closed.status, closed.closeout_note) == ("completed", "Fence reset and re-trenched")
    original = page.request.get(f"{server.url}/photos/{closed.evidence_photo_id}/original")
    assert original.ok and sha256(original.body()) == sha256(evidence)  # byte for byte


@browser
def test_a_photo_chosen_on_the_close_out_online_becomes_its_evidence(site, open_action, server, page):
    inspector, _permit = site
    sign_in_controlled(page, server, inspector)
    report_id = open_action.finding.inspection_id
    page.goto(f"{server.url}/inspections/{report_id}")
    form = f"form[action='/actions/{open_action.id}/close']"
    evidence = jpeg(61)
    # Online the server reads the time in the town's zone (offline the device sends its own offset).
    done = (utcnow() - dt.timedelta(minutes=30)).astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    page.fill(f"{form} input[name$='-completed_at']", done)
    page.set_input_files(f"{form} input[type=file]", [photo_file("fence.jpg", evidence)])
    page.click(f"{form} button[type=submit]")
    page.wait_for_selector(f"#action-{open_action.id}:has-text('(photo ')")
    assert outbox(page) == []  # it went straight to the server

    closed = _stored(CorrectiveAction, open_action.id)
    assert closed.status == "completed" and closed.evidence_photo_id
    assert db.session.get(Photo, closed.evidence_photo_id).original_sha256 == sha256(evidence)
    assert closed.evidence_photo_id in page.inner_text(f"#action-{open_action.id}")


@browser
def test_the_offline_link_in_the_menu_opens_the_permits_held_on_the_device(site, server, page):
    inspector, _permit = site
    sign_in_controlled(page, server, inspector)
    page.click("nav[aria-label=Main] a:text-is('Offline')")
    page.wait_for_selector("h1:has-text('Available offline')")
    assert page.url == f"{server.url}/offline/"
    page.click("main a:text-is('Outbox')")
    page.wait_for_selector("h1:has-text('Outbox')")
    page.click("main a[href='/offline/']")
    page.wait_for_selector("h1:has-text('Available offline')")


def test_the_offline_link_is_only_for_the_signed_in(site, client, signed_in):
    inspector, _permit = site
    assert '<a href="/offline/">Offline</a>' not in client.get("/login").text
    assert '<a href="/offline/">Offline</a>' in signed_in(inspector).get("/permits/").text


def test_a_close_out_whose_file_is_no_photo_is_refused_beside_it_and_nothing_changes(site, open_action, signed_in):
    inspector, _permit = site
    client = signed_in(inspector)
    prefix = f"close-{open_action.id}"
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    refused = client.post(f"/actions/{open_action.id}/close", {
        f"{prefix}-completed_at": done, f"{prefix}-evidence_photo": (io.BytesIO(b"not a photo"), "notes.txt")},
        htmx="findings")
    assert refused.status_code == 422 and f'id="{prefix}-evidence_photo-error"' in refused.text
    both = client.post(f"/actions/{open_action.id}/close", {
        f"{prefix}-completed_at": done, f"{prefix}-evidence_photo": (io.BytesIO(jpeg(71)), "fence.jpg"),
        f"{prefix}-evidence_photo_id": "some-photo-id"}, htmx="findings")
    assert both.status_code == 422 and "not both" in both.text
    action = _stored(CorrectiveAction, open_action.id)
    assert (action.status, action.evidence_photo_id, action.revision) == ("open", None, 1)
    assert db.session.scalar(select(func.count()).select_from(Photo)) == 0


@browser
def test_a_photo_marked_up_on_the_report_with_the_server_stopped_arrives_marked_up(site, server, page):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    wait_for_form(page)
    made = device_id(page)
    answer_checklist(page)
    photo = jpeg(7)
    page.set_input_files("#photos", [photo_file("site.jpg", photo)])
    mark_up = page.locator("[data-photo-previews] [data-markup]")
    expect(mark_up).to_have_text("Mark up")  # enabled once the device has the file's SHA-256
    mark_up.click()
    dialog = page.locator("#photo-markup-dialog")
    expect(dialog).to_be_visible()
    page.wait_for_function("() => document.querySelector('#photo-markup-dialog img').naturalWidth > 0")  # seen
    canvas = dialog.locator("canvas")
    box = canvas.bounding_box()
    page.mouse.move(box["x"] + 30, box["y"] + box["height"] - 30)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 40, steps=6)
    page.mouse.up()
    dialog.locator("[data-markup-done]").click()
    expect(dialog).to_be_hidden()
    expect(mark_up).to_have_text("Marked up (1)")
    expect(mark_up).to_be_focused()  # back where the inspector was
    page.check("#evaluation-compliant")
    observe_weather(page)
    draw_signature(page)
    submit(page)

    _sync(page, server)
    assert _stored(Inspection, made).status == "submitted"
    [stored] = db.session.scalars(select(Photo).where(Photo.inspection_id == made)).all()
    assert stored.original_sha256 == sha256(photo)
    assert [shape["kind"] for shape in stored.markup] == ["arrow"] and stored.marked_display_sha256


@browser
def test_a_snowmelt_discharge_recorded_offline_on_the_held_conditions_page_is_kept_and_arrives(site, server, page):
    """The conditions page is held for offline use (a discharge is seen on site, where the network may not reach),
    but its forms had no idempotency key: with no server, "Record the discharge" did nothing at all, and leaving the
    page lost it (an inspection is owed within 24 hours of it). It is kept on the device, the page says so, and it
    arrives once the server is back."""
    from inspect_app.conditions.models import SnowmeltDischarge
    from inspect_app.permits import services as permits

    inspector, permit = site
    permits.update_permit(None, permit, construction_started_on=(utcnow() - dt.timedelta(days=20)).date())
    db.session.commit()
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(f"{server.url}/permits/{permit.id}/conditions/")
    seen = (utcnow() - dt.timedelta(hours=2)).astimezone(LOCAL_TZ)
    page.fill("[name=snowmelt-discharge_at]", seen.strftime("%Y-%m-%dT%H:%M"))
    page.fill("[name=snowmelt-snow_in]", "3.5")
    page.fill("[name=snowmelt-note]", "Turbid discharge at the NE outlet")
    page.click("button:has-text('Record the discharge')")
    expect(page.locator("#offline-message")).to_contain_text("Saved on this device")
    expect(page.locator("header")).to_be_visible()  # the whole saved page, not a fragment in place of the page
    assert len(outbox(page)) == 1

    _sync(page, server)
    db.session.expire_all()
    (discharge,) = db.session.scalars(select(SnowmeltDischarge)).all()
    assert discharge.note == "Turbid discharge at the NE outlet" and discharge.permit_id == permit.id
