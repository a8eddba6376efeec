"""O&M with no network (§380-14) in a real Chromium: a permittee logs a disposal with photos and signs the
annual certification while the server process is stopped; both arrive once when it is back. Then the
agent finds the certification deficient and the 30-day cure clock runs until it is marked cured."""
from __future__ import annotations

import datetime as dt
import hashlib
import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from inspect_app.blobstore import BlobStore
from inspect_app.certifications.models import MaintenanceLogEntry, NoticeToCorrect, OMCertification
from inspect_app.schedule.models import PermitObligation
from inspect_app.extensions import db
from inspect_app.photos.models import Photo
from inspect_app.rules.calendar import add_months
from inspect_app.templating import local_date, local_time

from tests.certifications.om_helpers import local_today
from tests.offline.offline_helpers import (
    hold_permits, jpeg, outbox, photo_file, sha256, sign_in_controlled, wait_for_outbox,
)

pytestmark = pytest.mark.browser
SAVED = "Saved on this device — will sync"


WORK_DAY = local_today() - dt.timedelta(days=20)


@pytest.fixture
def site(owner, completed_permit):
    """A permittee's permit whose first certification period ended 10 days ago: it can be certified
    now (§380-14 C(2)(l): the last 12 months, once they are over)."""
    permit = completed_permit(owner, completed_on=add_months(local_today(), -12) - dt.timedelta(days=10))
    return owner, permit


def _wait_for_om_form(page) -> None:
    page.wait_for_selector("form[data-offline-om][data-loaded='1']", state="attached")


def _stored_bytes(app, sha: str) -> bytes:
    return BlobStore(app.config["BLOB_ROOT"]).path(sha).read_bytes()


def _draw(page, canvas: str) -> None:
    pad = page.locator(canvas)
    pad.scroll_into_view_if_needed()
    box = pad.bounding_box()
    page.mouse.move(box["x"] + 20, box["y"] + box["height"] / 2)
    page.mouse.down()
    for x, y in ((60, 10), (110, 40), (170, 12), (230, 35)):
        page.mouse.move(box["x"] + x, box["y"] + y, steps=4)
    page.mouse.up()


def test_a_disposal_and_the_certification_made_offline_arrive_once_then_the_cure_clock_runs(
        site, server, page, app, signed_in, agent):
    owner, permit = site
    forebay = next(s for s in permit.structures if s.name == "Forebay F-1")
    log_url = f"{server.url}/permits/{permit.id}/om/log"
    sign_in_controlled(page, server, owner)
    hold_permits(page, server)
    assert permit.number in page.inner_text("#held-list")

    server.stop()
    page.goto(log_url)  # the held page, from the service worker
    _wait_for_om_form(page)
    assert "Maintenance log" in page.inner_text("h1")

    # What the server form refuses is refused on the device, in the same words, beside the fields.
    page.check("#log-kind-3")  # disposal
    page.fill("#log-performed_by", "")
    page.click("#new-entry button[type=submit]")
    page.wait_for_selector("#log-description-error")
    assert "Say what was done." in page.inner_text("#log-description-error")
    assert "Say who did the work." in page.inner_text("#log-performed_by-error")
    assert "type of material" in page.inner_text("#log-material_type-error")
    assert "disposal location" in page.inner_text("#log-disposal_location-error")
    assert outbox(page) == []

    # Typed, two photos added, then the page reloaded: the draft comes back whole.
    photos = [jpeg(101), jpeg(102)]
    page.select_option("#log-structure_id", forebay.id)
    page.fill("#log-description", "Vacuumed sediment from the forebay")
    page.fill("#log-material_type", "Sediment, 2 cu yd")
    page.fill("#log-disposal_location", "Town transfer station")
    page.fill("#log-performed_by", "Acme Site Services")
    page.fill("#log-performed_on", WORK_DAY.isoformat())  # inside the period that is over
    page.set_input_files("#log-photos", [photo_file("before.jpg", photos[0]), photo_file("after.jpg", photos[1])])
    expect(page.locator("[data-om-photo-list] li")).to_have_count(2)
    page.wait_for_timeout(400)  # the draft is saved a moment after typing stops
    page.reload()
    _wait_for_om_form(page)
    assert page.is_checked("#log-kind-3")
    assert page.input_value("#log-disposal_location") == "Town transfer station"
    assert page.input_value("#log-structure_id") == forebay.id
    assert page.locator("[data-om-photo-list] li").count() == 2

    page.click("#new-entry button[type=submit]")
    page.wait_for_selector(f"#om-message:has-text('{SAVED}')")
    assert page.input_value("#log-description") == ""  # a blank form for the next entry
    [logged] = outbox(page)
    assert logged["op"]["kind"] == "om.log" and len(logged["op"]["payload"]["photos"]) == 2

    page.reload()  # still on the device after a reload, counted on the badge and listed on the log
    page.wait_for_selector("#outbox-badge[data-count='1']")
    page.wait_for_selector(f"#om-waiting [data-op-id='{logged['op_id']}']")
    assert "Vacuumed sediment from the forebay" in page.inner_text("#om-waiting")

    # The certification of the period, signed on the device while the server is still stopped.
    page.goto(f"{server.url}/permits/{permit.id}/om/certify")
    _wait_for_om_form(page)
    assert "Vacuumed sediment" in page.inner_text("#om-waiting")  # shown as on its way to the server
    page.click("form[data-offline-om] button[type=submit]")
    page.wait_for_selector("#cert-agree-error")
    assert "Tick the box to make the certification." in page.inner_text("#cert-agree-error")
    page.check("#cert-agree")
    _draw(page, "#cert-signature-canvas")
    expect(page.locator("[data-signature-value]")).to_have_value(re.compile("^data:image/png"))
    page.click("form[data-offline-om] button[type=submit]")
    page.wait_for_selector(f"#om-message:has-text('{SAVED}')")
    page.wait_for_selector("#outbox-badge[data-count='2']")
    signed = next(i for i in outbox(page) if i["op"]["kind"] == "om.certify")
    assert signed["op"]["payload"]["period_start"] == permit.completed_on.isoformat()
    signature_sha = signed["op"]["payload"]["signature_sha256"]
    assert signature_sha and [b["sha256"] for b in signed["blobs"]] == [signature_sha]
    db.session.expire_all()
    assert db.session.scalar(select(func.count()).select_from(MaintenanceLogEntry)) == 0
    assert db.session.scalar(select(func.count()).select_from(OMCertification)) == 0

    server.start()  # the same port: the same origin, worker and IndexedDB
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")  # a server coming back raises no `online` event
    wait_for_outbox(page, lambda items: not items)

    db.session.expire_all()
    entry = db.session.scalars(select(MaintenanceLogEntry)).one()
    assert entry.id == logged["op"]["record_id"] and entry.created_by_id == owner.id
    assert (entry.kind, entry.performed_on, entry.structure_id) == ("disposal", WORK_DAY, forebay.id)
    assert (entry.material_type, entry.disposal_location) == ("Sediment, 2 cu yd", "Town transfer station")
    stored = db.session.scalars(select(Photo).where(Photo.log_entry_id == entry.id)).all()
    assert sorted(hashlib.sha256(_stored_bytes(app, p.original_sha256)).hexdigest() for p in stored) == \
        sorted(sha256(p) for p in photos)
    cert = db.session.scalars(select(OMCertification)).one()
    assert cert.id == signed["op"]["record_id"] and cert.status == "submitted"
    assert (cert.period_start, cert.signer_name) == (permit.completed_on, owner.name)
    assert cert.contents["entry_ids"] == [entry.id]
    assert hashlib.sha256(_stored_bytes(app, cert.signature_sha256)).hexdigest() == signature_sha
    assert _stored_bytes(app, signature_sha).startswith(b"\x89PNG")
    assert "Town transfer station" in signed_in(owner).get(f"/permits/{permit.id}/om/certifications/{cert.id}").text

    # The agent finds it deficient through the review route: a notice to correct, and its cure clock.
    reviewer = signed_in(agent)
    response = reviewer.post(f"/permits/{permit.id}/om/certifications/{cert.id}/review",
                             {"review-decision": "deficient", "review-note": "Forebay F-1 still holds sediment."})
    assert response.status_code == 303
    notice = db.session.scalars(select(NoticeToCorrect)).one()
    assert notice.certification_id == cert.id
    cure = db.session.scalars(select(PermitObligation).where(PermitObligation.permit_id == permit.id,
                                                             PermitObligation.kind == "cure")).one()
    assert cure.due_at == notice.cure_due_at  # the engine's deadline, §380-14 E: 30 days
    assert dt.timedelta(days=30) <= cure.due_at - notice.issued_at < dt.timedelta(days=31)
    board = reviewer.get("/dashboard/?kind=cure").text
    assert permit.number in board and "Cure after notice to correct" in board and local_time(cure.due_at) in board
    assert f"Cure by {local_date(cure.due_at)}" in reviewer.get(f"/permits/{permit.id}/om").text

    assert reviewer.post(f"/permits/{permit.id}/om/notices/{notice.id}/cured").status_code == 303
    db.session.expire_all()
    assert db.session.scalar(select(func.count()).select_from(PermitObligation)
                             .where(PermitObligation.kind == "cure")) == 0
    assert "Nothing is due or late." in reviewer.get("/dashboard/?kind=cure").text
    plan = reviewer.get(f"/permits/{permit.id}/om").text
    assert "Cure by" not in plan and f"marked by {agent.name}" in plan


def test_a_refused_log_entry_shows_its_reason_and_is_corrected_and_sent_again(site, server, page):
    owner, permit = site
    sign_in_controlled(page, server, owner)
    page.goto(f"{server.url}/permits/{permit.id}/om/log")
    _wait_for_om_form(page)
    # An entry with nobody named as having done the work, made by a device that did not check it.
    entry_id, op_id = page.evaluate("[Outbox.uuid(), Outbox.uuid()]")
    page.evaluate("""([permitId, entryId, opId, day]) => Outbox.enqueue({
        op_id: opId, kind: "om.log", label: "Maintenance log: Repair", href: location.pathname, blobs: [],
        op: {op_id: opId, kind: "om.log", record_id: entryId, base_revision: null,
             device_time: Outbox.isoWithOffset(new Date()),
             payload: {permit_id: permitId, kind: "repair", performed_on: day, description: "Reset the outlet grate",
                       performed_by: "", structure_id: null, material_type: null, disposal_location: null,
                       photos: []}}}, [])""", [permit.id, entry_id, op_id, local_today().isoformat()])
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: len(items) == 1 and items[0]["state"] == "rejected")
    page.wait_for_selector(f"#item-{op_id} [data-reasons]")
    assert "Say who did the work." in page.inner_text(f"#item-{op_id} [data-reasons]")
    assert db.session.get(MaintenanceLogEntry, entry_id) is None

    page.click(f"#item-{op_id} [data-correct]")
    _wait_for_om_form(page)
    page.wait_for_selector("#log-performed_by-error")
    assert "Say who did the work." in page.inner_text("#log-performed_by-error")
    assert page.is_checked("#log-kind-1")  # repair
    assert page.input_value("#log-description") == "Reset the outlet grate"
    page.fill("#log-performed_by", "Pat Owner")
    page.click("#new-entry button[type=submit]")
    page.wait_for_url(f"**/permits/{permit.id}/om/log/{entry_id}")  # applied: the new entry's page
    assert "Reset the outlet grate" in page.inner_text("main")
    assert outbox(page) == []
    db.session.expire_all()
    entry = db.session.get(MaintenanceLogEntry, entry_id)
    assert (entry.kind, entry.performed_by) == ("repair", "Pat Owner")
    assert db.session.scalar(select(func.count()).select_from(MaintenanceLogEntry)) == 1


def test_online_a_certification_goes_straight_to_its_page(site, server, page):
    owner, permit = site
    sign_in_controlled(page, server, owner)
    page.goto(f"{server.url}/permits/{permit.id}")
    page.click(f"#om a[href='/permits/{permit.id}/om/certify']")  # hx-boost swaps the page in
    _wait_for_om_form(page)
    page.check("#cert-agree")
    page.click("form[data-offline-om] button[type=submit]")
    page.wait_for_url(f"**/permits/{permit.id}/om/certifications/*")
    db.session.expire_all()
    cert = db.session.scalars(select(OMCertification)).one()
    assert page.url.endswith(f"/om/certifications/{cert.id}")
    assert (cert.period_start, cert.signature_sha256) == (permit.completed_on, None)
    assert outbox(page) == []


def test_a_certification_refused_for_a_stale_period_is_signed_again_for_the_period_due(site, server, page):
    owner, permit = site
    sign_in_controlled(page, server, owner)
    certify_url = f"{server.url}/permits/{permit.id}/om/certify"
    page.goto(certify_url)
    _wait_for_om_form(page)
    # Signed on a device whose held page named another period than the one due.
    wrong_start = (permit.completed_on - dt.timedelta(days=365)).isoformat()
    op_id = page.evaluate("""([permitId, start]) => {
        const opId = Outbox.uuid();
        return Outbox.enqueue({op_id: opId, kind: "om.certify", label: "Annual O&M certification",
            href: location.pathname, blobs: [],
            op: {op_id: opId, kind: "om.certify", record_id: Outbox.uuid(), base_revision: null,
                 device_time: Outbox.isoWithOffset(new Date()),
                 payload: {permit_id: permitId, period_start: start, signer_name: "Pat Owner",
                           signature_sha256: null}}}, []).then(() => opId);
    }""", [permit.id, wrong_start])
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: len(items) == 1 and items[0]["state"] == "rejected")
    page.wait_for_selector(f"#item-{op_id} [data-reasons]")
    assert "The period due is" in page.inner_text(f"#item-{op_id} [data-reasons]")

    page.click(f"#item-{op_id} [data-correct]")
    _wait_for_om_form(page)
    assert "The period due is" in page.inner_text("#om-message")
    assert page.input_value("#cert-signer_name") == "Pat Owner"
    page.check("#cert-agree")
    page.click("form[data-offline-om] button[type=submit]")
    page.wait_for_url(f"**/permits/{permit.id}/om/certifications/*")
    assert outbox(page) == []  # the corrected item took the refused one's place
    db.session.expire_all()
    cert = db.session.scalars(select(OMCertification)).one()
    assert cert.period_start == permit.completed_on
