"""Inspection reports through the app: each of the six types completed, signed and submitted (§380-16 C(4))."""
from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from decimal import Decimal
from types import SimpleNamespace

import pytest
from PIL import Image
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.blobs.store import DiskStore
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Finding, Inspection, PipeVideo, PunchListItem
from inspect_app.inspections import canonical, queries, services
from inspect_app import inspection_types
from inspect_app.permits import services as permits
from inspect_app.blobs.models import Blob
from tests.builders import signature_data_url
from tests.inspections.report_helpers import (error_beside, filled, mail_to, save_with_finding, save_with_punch,
                                              start, submit)

COMMON_LABELS = ("(a) Date and time", "(a) Location", "(b) Inspector and credentials", "(c) Type",
                 "(d) Date of last inspection", "(e) Weather at the time", "(f) Precipitation, previous 24 hours",
                 "(g) Evaluation", "(h) Steps to correct violations")


@pytest.fixture
def site(make):
    """An active Longmeadow permit with its engineer, an agent, two areas, a silt fence, a pipe and an infiltration system."""
    inspector, agent = make.user("inspector"), make.user("agent")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad", "Driveway"], structures=["Pipe run P-1"],
                         construction_started_on=dt.date(2026, 6, 15))
    permits.add_structure(None, permit, name="Infiltration system IS-1", kind="infiltration", is_underground=True,
                          design_size="40 ft x 12 ft", design_invert="EL 182.50", material="HDPE chambers",
                          groundwater_separation_ft=Decimal("3.00"))
    permits.add_structure(None, permit, name="Silt fence, north edge", kind="bmp", is_underground=False)
    db.session.commit()
    return SimpleNamespace(permit=permit, inspector=inspector, agent=agent)


def _walk_through_with(client, permit, *items: str) -> Inspection:
    walk = start(client, permit, "walk_through")
    if items:
        assert save_with_punch(client, walk, *items).status_code == 303
    assert submit(client, walk).status_code == 303
    return walk


# The types the engineer makes while the work goes on (those of a completed project have tests of their own:
# tests/inspections/test_om_facility.py).
DURING_WORK = inspection_types.keys_where(after_completion=False)


@pytest.mark.parametrize("kind", DURING_WORK)
def test_each_type_is_completed_signed_and_submitted_with_every_field_a_to_h(kind, site, signed_in):
    client = signed_in(site.inspector)
    earlier = _walk_through_with(client, site.permit, "Loam and seed the swale") if kind == "final" else None
    inspection = start(client, site.permit, kind, latitude="42.050712", longitude="-72.582934")

    # A failed final needs no engineer's certification (it certifies a working system); compliance does.
    response = submit(client, inspection, evaluation="violations", corrective_steps="Repair the silt fence by Friday.",
                      **({"certified": None} if kind == "final" else {}))
    assert response.status_code == 303, [line for line in response.text.splitlines() if "field-error" in line]

    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    assert report.status == "submitted" and report.submitted_at and report.signed_at
    # (a) date and location (the device's GPS), (b) inspector and credentials, (c) type
    assert report.performed_at is not None
    assert (report.latitude, report.longitude, report.location_source) == (42.050712, -72.582934, "device")
    assert report.inspector_name == site.inspector.name
    assert report.inspector_credentials == site.inspector.credentials and "P.E. (MA) No." in report.inspector_credentials
    assert report.type == kind
    # (d) date of last inspection, computed from the permit's submitted reports
    assert report.last_inspection_at == (earlier.performed_at if earlier else None)
    # (e), (f) weather and 24-h precipitation stay pending until the server fills them
    assert report.weather_status == "pending" and report.precipitation_mm is None
    # (g), (h) evaluation and the steps to correct
    assert (report.evaluation, report.corrective_steps) == ("violations", "Repair the silt fence by Friday.")
    # every checklist item of the town profile answered, per subject
    expected = sum(len(found) for _, found in queries.checklist(report, report.details))
    assert len(report.answers) == expected > 0 and {a.answer for a in report.answers} == {"yes"}
    # signature: a real PNG kept in the blob store, served from the report
    assert report.signer_name == site.inspector.name and "under penalty of law" in report.certification_statement
    png = client.get(f"/inspections/{report.id}/signature.png")
    assert png.status_code == 200 and png.mimetype == "image/png"
    assert hashlib.sha256(png.data).hexdigest() == report.signature_sha256
    assert db.session.get(Blob, report.signature_sha256).content_type == "image/png"
    # the record's hash is the hash of its canonical form, and the audit log has the submission
    assert report.record_sha256 == canonical.record_hash(report)
    record = canonical.report_record(report)
    for key in ("a_date_and_location", "b_inspector", "c_type", "d_last_inspection_at", "e_weather",
                "f_precipitation_24h", "g_evaluation", "h_corrective_steps"):
        assert key in record
    assert db.session.scalar(select(func.count()).select_from(AuditEntry).where(
        AuditEntry.entity_id == report.id, AuditEntry.action == "inspection.submit")) == 1
    # the report went to the applicant and to the authority (the town's agents)
    for address in ("applicant@example.org", site.agent.email):
        assert any("Inspection report" in m.subject and "(g) Evaluation: violations" in m.body for m in mail_to(address))

    page = client.get(f"/inspections/{report.id}").text
    for label in COMMON_LABELS:
        assert label in page
    assert "Sign and submit" not in page and 'id="signature-image"' in page


def test_type_specific_parts_are_stored(site, signed_in):
    client = signed_in(site.inspector)
    initial = start(client, site.permit, "initial")
    assert submit(client, initial, existing_conditions="Tree line 20 ft west of the plan").status_code == 303
    db.session.expire_all()
    assert db.session.get(Inspection, initial.id).details["existing_conditions"] == "Tree line 20 ft west of the plan"

    _walk_through_with(client, site.permit, "Loam and seed the swale")
    final = start(client, site.permit, "final")
    pipe = next(s for s in site.permit.structures if s.kind == "pipe")
    assert submit(client, final, storm_depth_in="1.25").status_code == 303
    db.session.expire_all()
    final = db.session.get(Inspection, final.id)
    assert final.details["storm"]["depth_mm"] == pytest.approx(31.75)
    assert final.details["certification"]["certified"] is True
    video = db.session.scalar(select(PipeVideo).where(PipeVideo.inspection_id == final.id))
    assert video.structure_id == pipe.id and video.reference.startswith("CCTV run 7")
    page = client.get(f"/inspections/{final.id}").text
    assert "1.25 in" in page and "Certified:" in page and "CCTV run 7" in page


def test_a_missing_field_is_named_beside_it_and_nothing_is_saved(site, signed_in):
    """A report lacking an item of §380-16 C(4)(f)[1] (here (g), the evaluation) cannot be submitted."""
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    data = filled(page, notes="This note must not be kept.")
    del data["evaluation"]
    unanswered = next(name for name in data if name.startswith("answer-perimeter_controls"))
    del data[unanswered]

    response = client.post(f"/inspections/{inspection.id}/submit", data)

    assert response.status_code == 422
    assert error_beside(response.text, "evaluation").startswith("(g) Evaluation is required")
    assert error_beside(response.text, unanswered) == \
        "Site — Perimeter controls protect the site's edge before sediment…: answer yes, no or n/a."
    assert error_beside(response.text, "signer") == ""
    assert "The report cannot be submitted yet" in response.text
    db.session.expire_all()
    stored = db.session.get(Inspection, inspection.id)
    assert stored.status == "draft" and stored.notes is None and stored.signature_sha256 is None
    assert db.session.scalar(select(func.count()).select_from(ChecklistAnswer)) == 0
    assert db.session.scalar(select(func.count()).select_from(Blob)) == 0


def test_violations_need_steps_and_a_signature(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    response = submit(client, inspection, evaluation="violations", corrective_steps="", signature="")
    assert response.status_code == 422
    assert error_beside(response.text, "corrective_steps").startswith("(h) Give the steps")
    assert error_beside(response.text, "signature") == "Sign the report on the signature pad."


@pytest.mark.parametrize("bad, message", [
    ("data:image/png;base64,bm90IGFuIGltYWdl", "damaged"),
    ("data:image/jpeg;base64,AAAA", "must be drawn on the pad"),
    (None, "pad is empty"),
], ids=["not-a-png", "jpeg", "empty-pad"])
def test_a_bad_signature_is_refused_with_a_message(bad, message, site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    response = submit(client, inspection, signature=bad or signature_data_url(ink=False))
    assert response.status_code == 422 and message in error_beside(response.text, "signature")
    assert db.session.scalar(select(func.count()).select_from(Blob)) == 0


def test_a_draft_keeps_what_was_entered_and_its_signature(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    page = client.get(f"/inspections/{inspection.id}").text
    data = filled(page, notes="Half done; back after lunch.")
    del data["evaluation"]
    assert client.post(f"/inspections/{inspection.id}", data).status_code == 303
    db.session.expire_all()
    draft = db.session.get(Inspection, inspection.id)
    assert draft.status == "draft" and draft.notes == "Half done; back after lunch."
    assert DiskStore(client.client.application.config["BLOB_ROOT"]).exists(draft.signature_sha256)
    store = DiskStore(client.client.application.config["BLOB_ROOT"])
    with store.open(draft.signature_sha256) as stored, Image.open(stored) as image:
        assert image.format == "PNG"
    # The stored signature counts on submit; the pad need not be drawn again.
    assert submit(client, draft, signature="").status_code == 303


def test_a_submitted_report_cannot_be_edited(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    assert submit(client, inspection).status_code == 303
    db.session.expire_all()
    before = canonical.record_hash(db.session.get(Inspection, inspection.id))
    part = f"finding-new-{uuid.uuid4()}"  # a finding added as a part of the report form

    for url, data in [(f"/inspections/{inspection.id}", {"notes": "changed"}),
                      (f"/inspections/{inspection.id}/submit", {"notes": "changed"}),
                      (f"/inspections/{inspection.id}", {f"{part}-description": "late", f"{part}-severity": "minor"})]:
        response = client.post(url, data)
        assert response.status_code == 403
        assert "part of the legal record; it cannot be changed" in response.text

    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    assert report.notes is None and canonical.record_hash(report) == before == report.record_sha256
    with pytest.raises(services.ReportLocked):
        services.save_draft(site.inspector, report, services.values_of(report))


def test_an_amendment_points_at_the_original(site, signed_in):
    client = signed_in(site.inspector)
    original = start(client, site.permit, "periodic")
    assert submit(client, original, notes="Silt fence OK").status_code == 303

    response = client.post(f"/inspections/{original.id}/amend")
    assert response.status_code == 303
    amendment = db.session.get(Inspection, response.headers["Location"].rsplit("/", 1)[-1])
    assert amendment.amends_id == original.id and amendment.status == "draft"
    assert amendment.notes == "Silt fence OK" and len(amendment.answers) == len(original.answers)
    assert submit(client, amendment, notes="Silt fence OK; the north run was re-staked").status_code == 303

    original_page = client.get(f"/inspections/{original.id}").text
    assert f"/inspections/{amendment.id}" in original_page and "Amended by" in original_page
    amendment_page = client.get(f"/inspections/{amendment.id}").text
    assert "This report amends the report of" in amendment_page and f"/inspections/{original.id}" in amendment_page
    db.session.expire_all()
    assert db.session.get(Inspection, original.id).notes == "Silt fence OK"
    assert canonical.report_record(db.session.get(Inspection, amendment.id))["amends_id"] == original.id


def test_the_permit_page_lists_inspections_and_start_buttons(site, signed_in):
    client = signed_in(site.inspector)
    page = client.get(f"/permits/{site.permit.id}").text
    for kind in DURING_WORK:
        assert f'data-start="{kind}"' in page
    inspection = start(client, site.permit, "erosion_control")
    assert (inspection.location_source, inspection.latitude) == ("permit", site.permit.latitude)
    page = client.get(f"/permits/{site.permit.id}").text
    assert f"/inspections/{inspection.id}" in page and "Erosion control inspection" in page


def test_an_agent_may_start_only_periodic_inspections(site, signed_in):
    client = signed_in(site.agent)
    page = client.get(f"/permits/{site.permit.id}").text
    assert 'data-start="periodic"' in page and 'data-start="erosion_control"' not in page
    assert client.post(f"/permits/{site.permit.id}/inspections", {"type": "erosion_control"}).status_code == 403
    random = start(client, site.permit, "periodic")
    assert random.inspector_name == site.agent.name
    assert submit(client, random).status_code == 303


def test_stop_work_status_is_recorded_on_the_report(site, signed_in):
    permits.change_status(None, site.permit, "stop_work", by_its_act=True)  # as an order does
    db.session.commit()
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    assert inspection.under_stop_work is True
    assert "Done while a stop-work order was in effect" in client.get(f"/inspections/{inspection.id}").text


def test_unknown_type_is_refused_with_a_message(site, signed_in):
    client = signed_in(site.inspector)
    response = client.post(f"/permits/{site.permit.id}/inspections", {"type": "drive_by"})
    # (A town offers its own subset of the registry's types, issue 30: the message no longer counts them.)
    assert response.status_code == 400 and "Choose one of the town&#39;s inspection types" in response.text
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 0


def test_findings_are_part_of_the_record(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    response = save_with_finding(client, inspection, "Sediment past the silt fence", location="North edge",
                                 severity="major", is_violation="y", citation="§380-11 C(3)(d)")
    assert response.status_code == 303
    page = client.get(response.headers["Location"]).text
    assert "Sediment past the silt fence" in page[page.index('id="findings"'):]
    # a recorded violation cannot sit under "in compliance"
    refused = submit(client, inspection)
    assert refused.status_code == 422 and "violation is recorded" in error_beside(refused.text, "evaluation")
    assert submit(client, inspection, evaluation="violations", corrective_steps="Clean out and re-trench").status_code == 303
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    assert canonical.report_record(report)["findings"][0]["description"] == "Sediment past the silt fence"
    assert db.session.scalar(select(func.count()).select_from(Finding)) == 1
    assert db.session.scalar(select(func.count()).select_from(PunchListItem)) == 0
