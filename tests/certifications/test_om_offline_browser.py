"""O&M with no network (§380-14) in a real Chromium: a permittee logs a disposal with photos and signs the
annual certification while the server process is stopped, on the server's own forms kept by the service
worker; both arrive once when it is back. A refused one comes back as the form with its errors. Then the
agent finds the certification deficient and the 30-day cure clock runs until it is marked cured."""
from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout, expect
from sqlalchemy import func, select

from inspect_app.blobs.store import DiskStore
from inspect_app.certifications.models import MaintenanceLogEntry, NoticeToCorrect, OMCertification
from inspect_app.schedule.models import PermitObligation
from inspect_app.extensions import db
from inspect_app.photos.models import Photo
from inspect_app.rules.calendar import add_months
from inspect_app.templating import local_date, local_time

from tests.certifications.om_helpers import local_today
from tests.offline.offline_helpers import (
    WireFaults, hold_permits, jpeg, outbox, photo_file, sha256, sign_in_controlled, wait_for_outbox, wait_until,
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


def _stored_bytes(app, sha: str) -> bytes:
    return DiskStore(app.config["BLOB_ROOT"]).path(sha).read_bytes()


def _draw(page, canvas: str) -> None:
    pad = page.locator(canvas)
    pad.scroll_into_view_if_needed()
    box = pad.bounding_box()
    page.mouse.move(box["x"] + 20, box["y"] + box["height"] / 2)
    page.mouse.down()
    for x, y in ((60, 10), (110, 40), (170, 12), (230, 35)):
        page.mouse.move(box["x"] + x, box["y"] + y, steps=4)
    page.mouse.up()


def _count(model) -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(model))


def test_a_disposal_and_the_certification_made_offline_arrive_once_then_the_cure_clock_runs(
        site, server, page, app, signed_in, agent):
    owner, permit = site
    faults = WireFaults(app.wsgi_app)
    app.wsgi_app = faults
    forebay = next(s for s in permit.structures if s.name == "Forebay F-1")
    log_url = f"{server.url}/permits/{permit.id}/om/log"
    sign_in_controlled(page, server, owner)
    hold_permits(page, server)
    assert permit.number in page.inner_text("#held-list")

    server.stop()
    page.goto(log_url)  # the held page, from the service worker
    assert "Maintenance log" in page.inner_text("h1")
    photos = [jpeg(101, size=(1500, 1320), noise=True), jpeg(102)]  # the first is camera-sized: two chunks
    page.check("#log-kind-3")  # disposal
    page.select_option("#log-structure_id", forebay.id)
    page.fill("#log-description", "Vacuumed sediment from the forebay")
    page.fill("#log-material_type", "Sediment, 2 cu yd")
    page.fill("#log-disposal_location", "Town transfer station")
    page.fill("#log-performed_by", "Acme Site Services")
    page.fill("#log-performed_on", WORK_DAY.isoformat())  # inside the period that is over
    page.set_input_files("#log-photos", [photo_file("before.jpg", photos[0]), photo_file("after.jpg", photos[1])])
    page.click("#new-entry button[type=submit]")
    page.wait_for_selector(f"#offline-message:has-text('{SAVED}')")
    [logged] = outbox(page)
    assert logged["url"] == f"/permits/{permit.id}/om/log"

    page.reload()  # still on the device after a reload, counted on the badge
    page.wait_for_selector("#outbox-badge[data-count='1']")

    # The certification of the period, signed on the device while the server is still stopped.
    page.goto(f"{server.url}/permits/{permit.id}/om/certify")
    page.check("#cert-without_entries")  # the period has no log entry (on the page as held)
    page.check("#cert-agree")
    _draw(page, "#cert-signature-canvas")
    page.click("#cert-agree >> xpath=ancestor::form//button[@type='submit']")
    page.wait_for_selector(f"#offline-message:has-text('{SAVED}')")
    page.wait_for_selector("#outbox-badge[data-count='2']")
    assert _count(MaintenanceLogEntry) == 0 and _count(OMCertification) == 0

    faults.cut_blob_after = 1  # the first photo's second chunk is cut off half way
    server.start()  # the same port: the same origin, worker and IndexedDB
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")  # a server coming back raises no `online` event
    wait_until(page, lambda: faults.cut_blob_after is None, "the upload never reached the cut")
    page.click("#sync-now")  # the broken-off upload resumes where the server says it stopped
    wait_for_outbox(page, lambda kept: not kept)
    big = sha256(photos[0])
    faults.assert_sent_once(big, len(photos[0]))

    db.session.expire_all()
    entry = db.session.scalars(select(MaintenanceLogEntry)).one()
    assert entry.created_by_id == owner.id
    assert (entry.kind, entry.performed_on, entry.structure_id) == ("disposal", WORK_DAY, forebay.id)
    assert (entry.material_type, entry.disposal_location) == ("Sediment, 2 cu yd", "Town transfer station")
    stored = db.session.scalars(select(Photo).where(Photo.log_entry_id == entry.id)).all()
    assert sorted(hashlib.sha256(_stored_bytes(app, p.original_sha256)).hexdigest() for p in stored) == \
        sorted(sha256(p) for p in photos)
    cert = db.session.scalars(select(OMCertification)).one()
    assert cert.status == "submitted"
    assert (cert.period_start, cert.signer_name) == (permit.completed_on, owner.name)
    assert cert.contents["entry_ids"] == [entry.id]  # the log entry reached the server first
    assert _stored_bytes(app, cert.signature_sha256).startswith(b"\x89PNG")
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


def test_a_refused_log_entry_comes_back_as_the_form_with_its_errors_and_is_sent_again(site, server, page, context):
    owner, permit = site
    sign_in_controlled(page, server, owner)
    hold_permits(page, server)
    context.set_offline(True)
    page.goto(f"{server.url}/permits/{permit.id}/om/log")
    page.check("#log-kind-3")  # a disposal, with no material, no place and nobody named
    page.fill("#log-description", "Reset the outlet grate")
    page.fill("#log-performed_by", "")
    page.click("#new-entry button[type=submit]")
    page.wait_for_selector(f"#offline-message:has-text('{SAVED}')")

    context.set_offline(False)  # the `online` event sends it; the server refuses it
    page.goto(f"{server.url}/outbox")
    [refused] = wait_for_outbox(page, lambda kept: [p["state"] for p in kept] == ["refused"])
    assert _count(MaintenanceLogEntry) == 0
    page.reload()
    page.click(f"#item-{refused['id']} [data-correct]")
    page.wait_for_url(f"**/outbox/correct/{refused['id']}")
    # The server's own form, its own words beside the fields, as typed.
    try:
        page.wait_for_selector("#log-performed_by-error")
    except PlaywrightTimeout:
        raise AssertionError(f"the refused post opened as: {page.url}\n{page.inner_text('body')[:1500]}") from None
    assert "Say who did the work." in page.inner_text("#log-performed_by-error")
    # The page opens at what is wrong, not at the top of the form: the words in view, the field ready to type in.
    expect(page.locator("#log-performed_by-error")).to_be_in_viewport()
    assert page.evaluate("document.activeElement.id") == "log-performed_by"
    assert page.input_value("#log-description") == "Reset the outlet grate"
    page.fill("#log-performed_by", "Pat Owner")
    page.click("#new-entry button[type=submit]")
    # Online now: the disposal's own rules answer at once, in the same form.
    assert "type of material" in page.inner_text("#log-material_type-error")
    assert "disposal location" in page.inner_text("#log-disposal_location-error")
    page.check("#log-kind-1")  # a repair after all
    page.click("#new-entry button[type=submit]")
    page.wait_for_url(f"**/permits/{permit.id}/om/log/*")  # applied: the new entry's page
    assert "Reset the outlet grate" in page.inner_text("main")
    db.session.expire_all()
    entry = db.session.scalars(select(MaintenanceLogEntry)).one()
    assert (entry.kind, entry.performed_by) == ("repair", "Pat Owner")
    page.goto(f"{server.url}/outbox")
    assert outbox(page) == []  # the corrected post took the refused one's place


def test_online_a_certification_goes_straight_to_its_page(site, server, page):
    owner, permit = site
    sign_in_controlled(page, server, owner)
    page.goto(f"{server.url}/permits/{permit.id}")
    page.click(f"#om a[href='/permits/{permit.id}/om/certify']")  # hx-boost swaps the page in
    page.check("#cert-without_entries")  # the period has no log entry (on the page as held)
    page.check("#cert-agree")
    page.click("#cert-agree >> xpath=ancestor::form//button[@type='submit']")
    page.wait_for_url(f"**/permits/{permit.id}/om/certifications/*")
    db.session.expire_all()
    cert = db.session.scalars(select(OMCertification)).one()
    assert page.url.endswith(f"/om/certifications/{cert.id}")
    assert (cert.period_start, cert.signature_sha256) == (permit.completed_on, None)
    assert outbox(page) == []


def test_a_certification_refused_for_a_stale_period_is_signed_again_for_the_period_due(site, server, page):
    owner, permit = site
    sign_in_controlled(page, server, owner)
    page.goto(f"{server.url}/permits/{permit.id}/om/certify")
    # Signed on a page held on the device that named another period than the one now due.
    wrong_start = (permit.completed_on - dt.timedelta(days=365)).isoformat()
    page.evaluate("start => { document.querySelector('input[name=period_start]').value = start; }", wrong_start)
    page.check("#cert-without_entries")  # the period has no log entry (on the page as held)
    page.check("#cert-agree")
    page.click("#cert-agree >> xpath=ancestor::form//button[@type='submit']")
    page.wait_for_selector(".error-summary")
    assert "The period due is" in page.inner_text(".error-summary")
    assert _count(OMCertification) == 0
    # The page that came back is the period due: signed again, it is accepted.
    page.check("#cert-without_entries")  # the period has no log entry (on the page as held)
    page.check("#cert-agree")
    page.click("#cert-agree >> xpath=ancestor::form//button[@type='submit']")
    page.wait_for_url(f"**/permits/{permit.id}/om/certifications/*")
    db.session.expire_all()
    cert = db.session.scalars(select(OMCertification)).one()
    assert cert.period_start == permit.completed_on
