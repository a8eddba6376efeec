"""The annual certification (§380-14 C(2)(l)): assembled from the period's log, signed, submitted."""
from __future__ import annotations

import base64
import datetime as dt
import io
import re
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image
from pypdf import PdfReader
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from inspect_app.blobs.store import DiskStore
from inspect_app.certifications import services
from inspect_app.certifications.models import MaintenanceLogEntry, OMCertification
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.rules.calendar import add_months
from tests.builders import signature_data_url, signature_png
from tests.certifications.om_helpers import local_today


def _log(permit, owner, day, description, structure=None, kind="inspection"):
    entry = MaintenanceLogEntry(permit_id=permit.id, kind=kind, performed_on=day, description=description,
                                performed_by=owner.name, structure_id=structure.id if structure else None)
    db.session.add(entry)
    db.session.commit()
    return entry


def _structure(permit, name):
    return next(s for s in permit.structures if s.name == name)


def _sign(browser, permit, **extra):
    """Sign as the page asks: the box ticked, and the confirmation of a period with no log entry (only asked,
    and only read, when the period has none)."""
    return browser.post(f"/permits/{permit.id}/om/certify", {"cert-agree": "y", "cert-without_entries": "y", **extra})


def test_the_signer_is_the_signed_in_account_never_a_posted_name(make, signed_in, owner, completed_permit):
    """SPEC *Signatures*: the certification is signed by whoever is signed in, under their account's name; a
    name posted with the form (a hand-made post: the page has no such field) is not used."""
    permit = completed_permit(owner)
    browser = signed_in(owner)
    page = browser.get(f"/permits/{permit.id}/om/certify").text
    assert 'name="cert-signer_name"' not in page and "Signed by Pat Owner (from your account)" in page
    assert _sign(browser, permit, **{"cert-signer_name": "Dana Whitfield"}).status_code == 303
    cert = db.session.scalars(select(OMCertification)).one()
    assert (cert.signer_name, cert.submitted_by_id) == ("Pat Owner", owner.id)
    pdf = PdfReader(io.BytesIO(browser.get(f"/documents/om-certifications/{cert.id}.pdf").data))
    text = " ".join(page.extract_text() for page in pdf.pages)
    assert "Pat Owner" in text and "Dana Whitfield" not in text


def test_an_active_permit_cannot_be_certified(make, signed_in, owner):
    permit = make.permit(owner=owner, construction_started_on=dt.date(2026, 6, 2))
    assert permit.status == "active"  # construction started; no certificate of completion
    browser = signed_in(owner)
    assert "start after the certificate of completion" in browser.get(f"/permits/{permit.id}/om/certify").text
    response = _sign(browser, permit)
    assert response.status_code == 422
    assert "not completed" in response.text
    assert db.session.scalars(select(OMCertification)).all() == []


def test_certification_lists_the_entries_and_the_scheduled_tasks_with_none(make, signed_in, owner, completed_permit):
    """§380-14 C(2)(h): each scheduled task with no log entry in its interval is listed as missing."""
    completed_on = add_months(local_today(), -12) - dt.timedelta(days=10)
    permit = completed_permit(owner, completed_on)
    forebay = _structure(permit, "Forebay F-1")  # every 12 months
    _log(permit, owner, completed_on - dt.timedelta(days=1), "Before completion: not in this period", forebay)
    _log(permit, owner, completed_on + dt.timedelta(days=40), "Removed sediment from the forebay", forebay)
    _log(permit, owner, completed_on + dt.timedelta(days=100), "Disposed of sediment", forebay, kind="disposal")
    browser = signed_in(owner)

    preview = browser.get(f"/permits/{permit.id}/om/certify").text
    assert "Removed sediment from the forebay" in preview and "Before completion" not in preview
    # Basin B-1 is inspected every 6 months and has no entry at all: both halves of the year are missing.
    assert preview.count("Inspect the basin outlet") == 2

    response = _sign(browser, permit)
    assert response.status_code == 303
    cert = db.session.scalars(select(OMCertification)).one()
    assert (cert.period_start, cert.period_end) == (completed_on, add_months(completed_on, 12) - dt.timedelta(days=1))
    assert (cert.signer_name, cert.status, cert.submitted_by_id) == ("Pat Owner", "submitted", owner.id)
    assert permit.number in cert.statement

    record = services.certification_record(cert)
    assert [e["description"] for e in record["entries"]] == ["Disposed of sediment", "Removed sediment from the forebay"]
    assert [(m["structure"], m["window_start"], m["window_end"]) for m in record["missing"]] == [
        ("Basin B-1", completed_on, add_months(completed_on, 6) - dt.timedelta(days=1)),
        ("Basin B-1", add_months(completed_on, 6), add_months(completed_on, 12) - dt.timedelta(days=1)),
    ]
    assert record["permit"]["number"] == permit.number and record["town"] == "Longmeadow"

    page = browser.get(response.headers["Location"]).text
    assert "Removed sediment from the forebay" in page and "Inspect the basin outlet" in page

    # A back-dated entry logged after signing does not change what was certified.
    _log(permit, owner, completed_on + dt.timedelta(days=200), "Late entry", _structure(permit, "Basin B-1"))
    assert services.certification_record(cert)["missing"] == record["missing"]
    assert "Late entry" not in browser.get(response.headers["Location"]).text


def test_a_period_is_certified_only_once_it_is_over(make, signed_in, owner, completed_permit):
    # §380-14 C(2)(l): "the work that has been done over the last 12 months": not on the period's first day.
    young = completed_permit(owner, local_today() - dt.timedelta(days=30))
    browser = signed_in(owner)
    early = _sign(browser, young)
    assert early.status_code == 422 and "is not over yet" in early.text and "§380-14 C(2)(l)" in early.text
    assert db.session.scalars(select(OMCertification)).all() == []


def test_a_period_is_certified_once(make, signed_in, owner, completed_permit):
    permit = completed_permit(owner)  # completed a year and ten days ago: the first period is over
    browser = signed_in(owner)
    assert _sign(browser, permit).status_code == 303
    again = _sign(browser, permit)
    assert again.status_code == 422
    assert "already certified" in again.text
    assert len(db.session.scalars(select(OMCertification)).all()) == 1


def test_the_database_holds_one_standing_certification_per_period(owner, completed_permit):
    # A double-click that races past the page's check still makes one: a unique index, not just code.
    permit = completed_permit(owner)
    period = services.next_period(permit)

    def made(status: str = "submitted") -> OMCertification:
        return OMCertification(permit_id=permit.id, period_start=period.start, period_end=period.end,
                               signer_name="Pat Owner", statement="I certify.", status=status)

    db.session.add(made())
    db.session.commit()
    db.session.add(made())
    with pytest.raises(IntegrityError):
        db.session.commit()
    db.session.rollback()
    first = db.session.scalars(select(OMCertification)).one()
    first.status = "deficient"  # found deficient: the period is open for a new certification
    db.session.add(made())
    db.session.commit()
    assert len(db.session.scalars(select(OMCertification)).all()) == 2


def test_the_signature_is_required_and_a_drawn_one_is_kept(app, make, signed_in, owner, completed_permit):
    permit = completed_permit(owner)
    browser = signed_in(owner)
    unsigned = browser.post(f"/permits/{permit.id}/om/certify", {"cert-agree": ""})
    assert unsigned.status_code == 422
    assert "Tick the box" in unsigned.text
    garbage = _sign(browser, permit, **{"cert-signature": "data:image/png;base64,bm90IGEgcG5n"})
    assert garbage.status_code == 422 and "could not be read" in garbage.text
    assert db.session.scalars(select(OMCertification)).all() == []

    # The one signature decoder (signatures.py): a pad left untouched is no signature, as on a report.
    blank = io.BytesIO()
    Image.new("L", (60, 20), 255).save(blank, "PNG")
    untouched = _sign(browser, permit, **{"cert-signature": "data:image/png;base64,"
                                          + base64.b64encode(blank.getvalue()).decode()})
    assert untouched.status_code == 422 and "signature pad is empty" in untouched.text
    assert db.session.scalars(select(OMCertification)).all() == []

    assert _sign(browser, permit, **{"cert-signature": signature_data_url()}).status_code == 303
    cert = db.session.scalars(select(OMCertification)).one()
    with DiskStore(app.config["BLOB_ROOT"]).open(cert.signature_sha256) as stored:
        assert stored.read() == signature_png()


def test_permit_status_change_to_completed_allows_certifying(make, signed_in, owner):
    agent = make.user("agent")
    permit = make.permit(owner=owner, issued_on=local_today() - dt.timedelta(days=400),
                         construction_started_on=local_today() - dt.timedelta(days=300))
    permits.change_status(agent, permit, "final_submissions")
    permits.change_status(agent, permit, "completed", by_its_act=True)  # as its certificate does
    permit.completed_on = local_today()
    db.session.commit()
    # Due 30 days (the profile's number) after the first 12 months are over; not signable before.
    assert services.next_due_on(permit) == add_months(local_today(), 12) + dt.timedelta(days=30)
    assert _sign(signed_in(owner), permit).status_code == 422


# The inspection and maintenance schedule, each task with its time period (§380-14 C(2)(h); Southborough
# §7.6 d)(3)): the certification lists each task with no log entry in one of its intervals.
SCHEDULES = [("§380-14 C(2)(h)", "longmeadow"), ("§7.6 d)(3)", "southborough")]


@pytest.mark.parametrize("clause, town", SCHEDULES)
def test_each_towns_schedule_shows_the_tasks_not_done(clause, town, signed_in, owner, completed_permit):
    completed_on = add_months(local_today(), -12) - dt.timedelta(days=10)
    permit = completed_permit(owner, completed_on, town=town)
    _log(permit, owner, completed_on + dt.timedelta(days=40), "Removed sediment from the forebay",
         _structure(permit, "Forebay F-1"))
    preview = signed_in(owner).get(f"/permits/{permit.id}/om/certify").text
    assert preview.count("Inspect the basin outlet") == 2  # every 6 months, never logged
    assert "Remove sediment from the forebay" not in preview  # every 12 months, logged: not missing


def test_a_certification_with_no_responsible_party_recorded_is_refused(signed_in, owner, completed_permit):
    """§380-14 C(2)(a)-(b): the plan names who owns, operates and maintains the system; a certification that
    would list nobody bound to the plan is refused, in the page's error summary, and nothing is stored."""
    permit = completed_permit(owner, bound=False)
    refused = _sign(signed_in(owner), permit)
    assert refused.status_code == 422
    error = refused.text.split('class="error-summary" role="alert">', 1)[1].split("</div>", 1)[0]
    assert "No responsible party of the O&amp;M plan is recorded for" in error and "(§380-14 C(2))" in error
    assert db.session.scalars(select(OMCertification)).all() == []


def test_the_certification_and_the_certificate_read_the_same_recording_of_the_plan(make, signed_in, owner,
                                                                                  completed_permit):
    """§380-14 B: the final O&M plan is recorded at the registry of deeds, once. Filed with the final O&M plan
    and accepted (§380-18 A), its book and page is what the certificate, the certification and the plan page say,
    not "not yet recorded" on one and "Book 25391, Page 112" on another."""
    agent = make.user("agent")
    permit = completed_permit(owner)
    db.session.add_all([
        FinalSubmission(permit_id=permit.id, kind="om_plan", registry_reference="Book 25391, Page 112",
                        status="accepted", reviewed_by_id=agent.id, reviewed_at=dt.datetime.now(dt.UTC)),
        CertificateOfCompletion(permit_id=permit.id, issued_by_id=agent.id),
    ])
    db.session.commit()
    browser = signed_in(owner)
    assert _sign(browser, permit).status_code == 303
    certification = db.session.scalars(select(OMCertification)).one()

    def read(pdf: bytes) -> str:
        return " ".join(" ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages).split())

    recorded = "Recorded at the Hampden County Registry of Deeds, Book 25391, Page 112"
    certified = read(browser.get(f"/documents/om-certifications/{certification.id}.pdf").data)
    assert recorded in certified and "Not yet recorded" not in certified
    assert recorded in read(documents.certificate_pdf(permit))
    plan_page = signed_in(agent).get(f"/permits/{permit.id}/om").text
    assert 'id="plan-recording">Book 25391, Page 112<' in plan_page


def test_a_period_with_no_log_entry_is_certified_only_once_the_signer_confirms_it(app, signed_in, owner,
                                                                                 completed_permit):
    """§380-14 C(2)(l): the certification documents the work of the last 12 months; with none logged the page warns,
    and the server asks for the confirmation before it signs anything."""
    permit = completed_permit(owner)
    browser = signed_in(owner)
    page = browser.get(f"/permits/{permit.id}/om/certify").text
    assert 'id="no-entries-warning"' in page and "The maintenance log has no entries for this period." in page
    assert 'name="cert-without_entries"' in page

    blobs = Path(app.config["BLOB_ROOT"])
    kept_before = sorted(blobs.rglob("*"))
    refused = browser.post(f"/permits/{permit.id}/om/certify",
                           {"cert-agree": "y", "cert-signature": signature_data_url()})
    assert refused.status_code == 422
    # The message is beside the box it asks for.
    box = refused.text.split('id="cert-without_entries"', 1)[1].split("</div>", 1)[0]
    assert "The maintenance log has no entries for" in box and "tick the box to certify" in box
    assert db.session.scalars(select(OMCertification)).all() == []
    assert sorted(blobs.rglob("*")) == kept_before  # nor its drawn signature

    assert _sign(browser, permit).status_code == 303
    assert db.session.scalars(select(OMCertification)).one().contents["entry_ids"] == []

    # With work logged in the period: no warning, and nothing more to tick.
    logged = completed_permit(owner)
    _log(logged, owner, logged.completed_on + dt.timedelta(days=40), "Removed sediment from the forebay",
         _structure(logged, "Forebay F-1"))
    page = browser.get(f"/permits/{logged.id}/om/certify").text
    assert "no-entries-warning" not in page and 'name="cert-without_entries"' not in page
    assert browser.post(f"/permits/{logged.id}/om/certify", {"cert-agree": "y"}).status_code == 303


def test_the_certification_page_links_its_pdf(make, signed_in, owner, completed_permit):
    permit = completed_permit(owner)
    browser = signed_in(owner)
    page = browser.get(_sign(browser, permit).headers["Location"]).text
    cert = db.session.scalars(select(OMCertification)).one()
    link = re.search(r'<a [^>]*href="(/documents/om-certifications/[^"]+\.pdf)"[^>]*>Certification \(PDF\)</a>', page)
    assert link, "no link to the certification's PDF"
    pdf = browser.get(link.group(1))
    assert pdf.status_code == 200 and pdf.mimetype == "application/pdf"
    words = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.data)).pages)
    assert permit.number in words and cert.signer_name in words


def _with_chunk(png: bytes, kind: bytes, data: bytes) -> bytes:
    """`png` with one more chunk before its image data, its CRC right: a file any decoder reads as sound."""
    chunk = struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    at = png.index(b"IDAT") - 4
    return png[:at] + chunk + png[at:]


def test_a_signature_whose_text_chunk_inflates_to_megabytes_is_refused_not_a_server_error(app, signed_in, owner,
                                                                                           completed_permit):
    """A 9 KB PNG whose zTXt chunk inflates to 8 MiB made Pillow raise ValueError, which the signature check
    did not catch: a 500. It is a signature that cannot be read, said beside the pad; nothing is kept."""
    permit = completed_permit(owner)
    bomb = _with_chunk(signature_png(), b"zTXt", b"Comment\x00\x00" + zlib.compress(b"\x00" * (8 << 20), 9))
    assert len(bomb) < 20_000
    app.config["PROPAGATE_EXCEPTIONS"] = False
    posted = "data:image/png;base64," + base64.b64encode(bomb).decode()
    answer = _sign(signed_in(owner), permit, **{"cert-signature": posted})
    assert answer.status_code == 422 and "could not be read" in answer.text
    assert db.session.scalars(select(OMCertification)).all() == []


def test_a_signed_certification_keeps_the_parties_it_was_signed_for(make, signed_in, owner, agent, completed_permit):
    """Its parties were worked out each time it was shown: an owner recorded later, from a day inside the certified
    period, replaced the one it was signed for on its page and on any PDF drawn after."""
    permit = completed_permit(owner)
    _log(permit, owner, permit.completed_on + dt.timedelta(days=30), "Checked the forebay")
    browser = signed_in(owner)
    assert _sign(browser, permit).status_code == 303
    cert = db.session.scalars(select(OMCertification)).one()
    assert [p["name"] for p in services.certification_record(cert)["parties"]] == ["Pat Owner"]
    services.change_responsible_party(agent, permit, role="owner", name="Nora Newowner", email=None, address=None,
                                      starts_on=permit.completed_on + dt.timedelta(days=60))
    db.session.commit()
    db.session.expire_all()
    record = services.certification_record(db.session.get(OMCertification, cert.id))
    assert [(p["name"], p["role"]) for p in record["parties"]] == [("Pat Owner", "owner")]
