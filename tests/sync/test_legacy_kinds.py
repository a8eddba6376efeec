"""The retired operation kinds: nothing live makes them, but an item the previous release's outbox left queued on
a device still arrives through /sync/push and is answered as before, through the report form's own service."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.certifications.models import OMCertification
from inspect_app.mail.models import OutboundEmail
from inspect_app.permits.models import PermitAssignment
from tests.certifications.om_helpers import local_today
from inspect_app.types import new_id
from sync.client import SyncClient, new_op
from tests.sync.test_field_work import blobs, sha, submission, upload  # noqa: F401 (blobs: a fixture)

RETIRED = ("inspection.submit", "action.close", "om.log", "om.certify")


@pytest.fixture
def site(make, central, device_token):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"])
    return inspector, permit, SyncClient(central.url, device_token(inspector))


def test_a_report_left_queued_by_the_previous_outbox_is_submitted_through_the_form_service(site, blobs):
    """A queued `inspection.submit` is applied: the report is submitted and signed, its finding and corrective
    action keep the device's ids, and the report is mailed in the same transaction, as the form does."""
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east", "entrance")
    op = submission(permit, inspector, blobs)
    answer = tablet.push([op])[0]

    assert answer["status"] == "applied", answer
    db.session.expire_all()
    report = db.session.get(Inspection, op["record_id"])
    assert report.status == "submitted" and report.signer_name == inspector.name
    assert answer["record_sha256"] == report.record_sha256
    [sent] = op["payload"]["findings"]
    finding = db.session.get(Finding, sent["id"])
    assert finding.inspection_id == report.id and finding.description == sent["description"]
    assert db.session.get(CorrectiveAction, sent["actions"][0]["id"]).finding_id == finding.id
    mails = db.session.scalars(select(OutboundEmail).where(OutboundEmail.permit_id == permit.id)).all()
    assert [m.subject for m in mails if m.subject.startswith("Inspection report")], "the report was not sent"
    submitted = db.session.scalars(select(AuditEntry.action).where(AuditEntry.entity_id == report.id)).all()
    assert submitted.count("inspection.submit") == 1


def test_a_queued_report_carries_the_observed_weather_the_form_posted(site, blobs):
    """(e) The station is not asked when a queued report is applied, so its weather is pending: the observed
    weather its form posted is kept as signed. (A previous release's form had no such field: its signed report is
    still taken, as the first test here shows, its weather "Pending" until the station reports.)"""
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east", "entrance")
    op = submission(permit, inspector, blobs)
    op["payload"]["form"]["observed_weather"] = "Overcast, 45 °F, calm"
    answer = tablet.push([op])[0]

    assert answer["status"] == "applied", answer
    db.session.expire_all()
    report = db.session.get(Inspection, op["record_id"])
    assert (report.weather_status, report.observed_weather) == ("pending", "Overcast, 45 °F, calm")
    assert answer["record_sha256"] == report.record_sha256


def test_a_refused_part_of_a_queued_report_is_answered_beside_its_field(site, blobs):
    """The form's service refuses a finding without a description; the device is told where, nothing is kept."""
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east", "entrance")
    op = submission(permit, inspector, blobs)
    op["payload"]["findings"][0]["description"] = "   "
    answer = tablet.push([op])[0]

    assert answer["status"] == "rejected"
    assert answer["reasons"] == {"payload.findings.0.description": "Describe what was found."}
    db.session.expire_all()
    assert db.session.get(Inspection, op["record_id"]) is None


def test_a_queued_report_or_certification_is_signed_only_with_a_signature_its_sender_uploaded(
        site, make, central, device_token, blobs):
    """A signature named by its hash was taken from any stored file the sender may use: a colleague's signature
    on a report they both see signed a report as theirs, and a site photo signed an O&M certification. Only a
    pad's drawing the sender uploaded signs, each as the pad's is checked."""
    inspector, permit, tablet = site
    colleague = make.user("inspector")
    permit.assignments.append(PermitAssignment(user=colleague, capacity="erosion_control_inspector"))
    db.session.commit()
    upload(tablet, blobs, "signature", "east", "entrance")  # the first inspector's own drawing, signing a report
    assert tablet.push([submission(permit, inspector, blobs)])[0]["status"] == "applied"
    theirs = SyncClient(central.url, device_token(colleague))
    op = submission(permit, colleague, blobs)  # the colleague sees that report, and names its signature
    answer = theirs.push([op])[0]
    assert answer["status"] == "rejected", answer
    assert "drawn on this account's device" in answer["reasons"]["payload.signature_sha256"]
    db.session.expire_all()
    assert db.session.get(Inspection, op["record_id"]) is None

    owner = make.user("permittee")
    permit.owner_id, permit.status, permit.completed_on = owner.id, "completed", local_today() - dt.timedelta(days=400)
    db.session.commit()
    device = SyncClient(central.url, device_token(owner))
    device.upload_blob(blobs["east"], "image/jpeg")  # a photo, uploaded by the owner, is still no signature
    for signature in (blobs["east"], blobs["signature"]):
        certify = new_op("om.certify", new_id(), {"permit_id": permit.id, "signature_sha256": sha(signature),
                                                  "period_start": permit.completed_on.isoformat()})
        refused = device.push([certify])[0]
        assert refused["status"] == "rejected", refused
        assert "drawn on this account's device" in refused["reasons"]["payload.signature_sha256"]
    assert db.session.scalars(select(OMCertification)).all() == []


def test_the_retired_kinds_are_marked_deprecated_for_new_clients(client):
    """The OpenAPI description still accepts them, and says they are retired and what to send instead."""
    schemas = client.get("/sync/openapi.json").json["components"]["schemas"]
    for kind in RETIRED:
        assert schemas[f"payload:{kind}"]["deprecated"] is True
        assert "send the form's own post instead" in schemas[f"payload:{kind}"]["description"]
    assert "deprecated" not in schemas["payload:notice.give"]
