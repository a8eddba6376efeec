"""Field work made offline on a tablet, pushed as operations to a live central record on 127.0.0.1.

An inspection with its finding, corrective action, photos and signature; a corrective action's
close-out; an O&M log entry; a 24-hour notice. Each arrives once, or is refused with its fields and
leaves nothing behind, or waits for what it needs.
"""
from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.blobs.store import DiskStore
from inspect_app.certifications.models import MaintenanceLogEntry
from inspect_app.documents.services import current_document
from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection, InspectionNotice
from inspect_app.mail.models import OutboundEmail
from inspect_app.permits.services import profile_of
from inspect_app.photos.models import Photo
from inspect_app.types import LOCAL_TZ, new_id, utcnow
from sync.client import SyncClient, new_op
from sync.services import create_device
from sync.models import SyncConflict, SyncDevice, SyncOperation
from tests.builders import jpeg, signature_png


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def count(model, *where) -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(model).where(*where))


def erosion_form(permit, inspector, **overrides) -> dict[str, str]:
    """What the online erosion-control form posts for this permit: every checklist item answered."""
    subjects = {"site": ["site"], "area": [a.id for a in permit.areas],
                "structure": [s.id for s in permit.structures],
                "control": [s.id for s in permit.structures if s.kind == "bmp"],
                "pipe": [s.id for s in permit.structures if s.kind == "pipe"]}
    form = {f"answer-{item.key}-{subject}": "yes"
            for item in profile_of(permit).inspection_type("erosion_control").checklist
            for subject in subjects[item.per]}
    form |= {"evaluation": "violations", "corrective_steps": "Reset the silt fence along the east line.",
             "notes": "Ground soft after rain."}
    return {k: v for k, v in (form | overrides).items() if v is not None}


@pytest.fixture
def site(make, central, device_token):
    """An inspector's tablet (a client with its token) and the permit it holds offline."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"])
    return inspector, permit, SyncClient(central.url, device_token(inspector))


def submission(permit, inspector, blobs: dict[str, bytes], **form_overrides) -> dict:
    """An inspection.submit operation as the tablet queues it: a finding with an action, two photos."""
    finding_id = new_id()
    payload = {
        "permit_id": permit.id, "type": "erosion_control",
        "performed_at": (utcnow() - dt.timedelta(hours=1)).astimezone(LOCAL_TZ).isoformat(),
        "latitude": 42.0503, "longitude": -72.5831, "form": erosion_form(permit, inspector, **form_overrides),
        "signature_sha256": sha(blobs["signature"]),
        "findings": [{"id": finding_id, "description": "Silt fence down at the east line", "location": "East line",
                      "severity": "major", "is_violation": True, "citation": "§380-11 C(3)(d)",
                      "area_id": permit.areas[0].id, "structure_id": None,
                      "actions": [{"id": new_id(), "kind": "significant_repair",
                                   "description": "Reset and re-trench the silt fence", "owner_name": "Site contractor"}]}],
        "photos": [{"id": new_id(), "sha256": sha(blobs["east"]), "caption": "East line", "finding_id": finding_id},
                   {"id": new_id(), "sha256": sha(blobs["entrance"]), "caption": "Construction entrance",
                    "finding_id": None}],
    }
    return new_op("inspection.submit", new_id(), payload)


@pytest.fixture
def blobs() -> dict[str, bytes]:
    return {"signature": signature_png(), "east": jpeg(30), "entrance": jpeg(200)}


def upload(client: SyncClient, blobs: dict[str, bytes], *names: str) -> None:
    for name in names:
        client.upload_blob(blobs[name], "image/png" if name == "signature" else "image/jpeg")


def test_an_offline_inspection_arrives_once_with_byte_identical_photos(app, site, blobs):
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east", "entrance")
    op = submission(permit, inspector, blobs)
    answer = tablet.push([op])[0]
    assert answer["status"] == "applied", answer
    assert answer["record_id"] == answer["id"] == op["record_id"]

    inspection = db.session.get(Inspection, op["record_id"])
    assert (inspection.status, inspection.evaluation, inspection.location_source) == ("submitted", "violations", "device")
    assert inspection.record_sha256 == answer["record_sha256"]
    assert inspection.signature_sha256 == sha(blobs["signature"])
    assert answer["weather_status"] == inspection.weather_status
    sent = op["payload"]
    [finding] = inspection.findings
    assert finding.id == sent["findings"][0]["id"] and finding.is_violation and finding.area_id == permit.areas[0].id
    assert [a.id for a in finding.actions] == [sent["findings"][0]["actions"][0]["id"]]
    store = DiskStore(app.config["BLOB_ROOT"])
    for photo_sent in sent["photos"]:
        photo = db.session.get(Photo, photo_sent["id"])
        assert photo.inspection_id == inspection.id and photo.finding_id == photo_sent["finding_id"]
        assert photo.caption == photo_sent["caption"]
        assert sha(store.path(photo.original_sha256).read_bytes()) == photo_sent["sha256"]  # byte for byte

    # The response was lost: the tablet sends the same operation again, and then as a new operation.
    again = tablet.push([op])[0]
    assert again == {"op_id": op["op_id"], "status": "duplicate",
                     "original": {k: v for k, v in answer.items() if k != "op_id"}}
    requeued = new_op("inspection.submit", op["record_id"], op["payload"])
    assert tablet.push([requeued])[0]["original"] == again["original"]
    assert count(Inspection) == 1 and count(Finding) == 1 and count(CorrectiveAction) == 1 and count(Photo) == 2
    assert count(AuditEntry, AuditEntry.action == "inspection.submit") == 1
    assert count(OutboundEmail, OutboundEmail.subject.startswith("Inspection report")) == 1


def test_a_report_pushed_with_a_refused_operation_after_it_is_frozen_and_sealed(site, blobs):
    """A refused operation rolls back its own SAVEPOINT only: the report before it in the same push is
    still frozen as its transaction commits, and every audit entry of the push is numbered in the chain."""
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east", "entrance")
    op = submission(permit, inspector, blobs)
    refused = submission(permit, inspector, blobs, evaluation=None)
    answers = tablet.push([op, refused])
    assert [a["status"] for a in answers] == ["applied", "rejected"]

    db.session.expire_all()
    frozen = current_document("inspection_report", op["record_id"])
    assert frozen is not None and frozen.record_sha256 == answers[0]["record_sha256"]
    assert count(AuditEntry, AuditEntry.commit_seq.is_(None)) == 0


def test_a_signer_named_in_the_form_is_not_the_signer(site, blobs):
    """SPEC *Signatures*: a report sent from a device is signed by the token's user, with their account's
    credentials; a name and credentials in its form (someone else's) are not used."""
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east", "entrance")
    op = submission(permit, inspector, blobs, signer_name="Dana Whitfield",
                    signer_credentials="P.E. (MA) No. 41177; CPESC No. 3310")
    assert tablet.push([op])[0]["status"] == "applied"
    report = db.session.get(Inspection, op["record_id"])
    assert (report.signer_name, report.signer_credentials) == (inspector.name, inspector.credentials)
    assert current_document("inspection_report", report.id).signed_by == inspector.name


def test_a_submission_without_the_evaluation_is_rejected_and_leaves_nothing(site, blobs):
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east", "entrance")
    op = submission(permit, inspector, blobs, evaluation=None)
    answer = tablet.push([op])[0]
    assert answer["status"] == "rejected"
    assert "(g) Evaluation is required" in answer["reasons"]["payload.form.evaluation"]
    for model in (Inspection, Finding, CorrectiveAction, Photo):
        assert count(model) == 0, model
    assert count(AuditEntry, AuditEntry.entity.in_(["inspections", "findings", "photos"])) == 0
    assert tablet.push([op])[0]["original"]["status"] == "rejected"  # a replay changes nothing

    # Corrected on the tablet and sent again (a new operation for the same report): it goes through.
    corrected = new_op("inspection.submit", op["record_id"],
                       {**op["payload"], "form": {**op["payload"]["form"], "evaluation": "violations"}})
    assert tablet.push([corrected])[0]["status"] == "applied"
    assert count(Inspection) == 1 and count(Photo) == 2


def test_a_report_whose_photo_is_not_uploaded_yet_waits_then_goes_through(site, blobs):
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east")
    op = submission(permit, inspector, blobs)
    answer = tablet.push([op])[0]
    assert answer["status"] == "waiting" and answer["waiting_for"] == {"blob": sha(blobs["entrance"])}
    assert count(Inspection) == 0 and count(Photo) == 0

    upload(tablet, blobs, "entrance")
    answer = tablet.push([op])[0]
    assert answer.get("original", answer)["status"] == "applied"
    assert db.session.get(Inspection, op["record_id"]).status == "submitted"
    assert count(Photo) == 2 and count(SyncOperation) == 1


def test_a_waiting_report_of_a_tablet_revoked_since_is_never_applied(make, site, blobs, central, device_token):
    """A lost tablet's report waited for a photo; the admin revoked the tablet. When the same photo's bytes came from
    the inspector's new tablet, the waiting report was applied all the same, in the inspector's name. It is now
    refused as from a revoked device, and nothing of it is recorded."""
    from sync.services import revoke_device

    inspector, permit, lost = site
    upload(lost, blobs, "signature", "east")
    op = submission(permit, inspector, blobs)
    assert lost.push([op])[0]["status"] == "waiting"
    (device,) = db.session.scalars(select(SyncDevice).where(SyncDevice.user_id == inspector.id))
    revoke_device(make.user("admin", town=None), device)
    db.session.commit()

    new_tablet = SyncClient(central.url, device_token(inspector, "new tablet"))
    upload(new_tablet, blobs, "entrance")
    db.session.expire_all()
    stored = db.session.get(SyncOperation, op["op_id"])
    assert stored.status == "rejected" and "revoked" in stored.result["reasons"]["device"]
    assert count(Inspection) == 0 and count(Photo) == 0


def test_a_waiting_report_of_a_tablet_its_own_users_new_password_revoked_still_arrives(site, blobs, central,
                                                                                      device_token):
    """A new password ends every device token of the account, the user's own act: the work its tablet sent, still
    waiting for a photo, is theirs and arrives once the photo comes from the tablet signed in again."""
    from inspect_app.accounts.services import change_password

    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east")
    op = submission(permit, inspector, blobs)
    assert tablet.push([op])[0]["status"] == "waiting"
    change_password(inspector, inspector, "a-new-long-password-1")
    db.session.commit()
    again = SyncClient(central.url, device_token(inspector, "tablet, signed in again"))
    upload(again, blobs, "entrance")
    db.session.expire_all()
    assert db.session.get(SyncOperation, op["op_id"]).status == "applied"
    assert db.session.get(Inspection, op["record_id"]).status == "submitted"


def test_closing_a_corrective_action_stale_is_a_conflict_kept_for_a_person(make, site, blobs, central):
    inspector, permit, tablet = site
    upload(tablet, blobs, "signature", "east", "entrance")
    report = submission(permit, inspector, blobs)
    tablet.push([report])
    action_id = report["payload"]["findings"][0]["actions"][0]["id"]
    # The site contractor closes it online first (revision 1 → 2) while the tablet is offline.
    permittee = make.user("permittee")
    findings.close_out(permittee, db.session.get(CorrectiveAction, action_id), utcnow(), "Reset by the contractor")
    db.session.commit()

    evidence = jpeg(90)
    tablet.upload_blob(evidence, "image/jpeg")
    close = new_op("action.close", action_id, {
        "completed_at": utcnow().isoformat(), "note": "Silt fence reset and re-trenched",
        "evidence_photo": {"id": new_id(), "sha256": sha(evidence), "caption": "East line, reset"}}, base_revision=1)
    answer = tablet.push([close])[0]
    assert answer["status"] == "conflict"
    assert answer["server"]["closeout_note"] == "Reset by the contractor" and answer["server"]["revision"] == 2
    db.session.expire_all()
    action = db.session.get(CorrectiveAction, action_id)
    assert action.closeout_note == "Reset by the contractor" and action.evidence_photo_id is None  # not applied...
    conflict = db.session.scalar(select(SyncConflict))
    assert (conflict.entity, conflict.entity_id) == ("corrective_actions", action_id)
    assert conflict.device_version["payload"]["note"] == "Silt fence reset and re-trenched"  # ...but kept
    assert tablet.push([close])[0]["original"]["status"] == "conflict"
    assert count(SyncConflict) == 1 and count(Photo) == 2

    # Based on what the server has now, the tablet's close-out goes through with its evidence photo.
    again = new_op("action.close", action_id, {**close["payload"]}, base_revision=2)
    answer = tablet.push([again])[0]
    assert answer["status"] == "applied" and answer["revision"] > 2
    db.session.expire_all()
    action = db.session.get(CorrectiveAction, action_id)
    assert action.closeout_note == "Silt fence reset and re-trenched"
    assert action.evidence_photo_id == close["payload"]["evidence_photo"]["id"]
    assert db.session.get(Photo, action.evidence_photo_id).original_sha256 == sha(evidence)


def test_a_disposal_logged_without_its_location_is_rejected_with_the_field(site, blobs):
    _inspector, permit, tablet = site
    today = utcnow().astimezone(LOCAL_TZ).date().isoformat()
    entry = {"permit_id": permit.id, "kind": "disposal", "performed_on": today,
             "description": "Cleaned the forebay", "performed_by": "Site contractor",
             "structure_id": None, "material_type": "Sediment from the forebay", "disposal_location": None,
             "photos": [{"id": new_id(), "sha256": sha(blobs["east"]), "caption": "Forebay", "finding_id": None}]}
    tablet.upload_blob(blobs["east"], "image/jpeg")
    answer = tablet.push([new_op("om.log", new_id(), entry)])[0]
    assert answer["status"] == "rejected"
    assert answer["reasons"] == {"payload.disposal_location": "A disposal needs the disposal location."}
    assert count(MaintenanceLogEntry) == 0 and count(Photo) == 0

    fixed = new_op("om.log", new_id(), {**entry, "disposal_location": "Town transfer station"})
    assert tablet.push([fixed])[0]["status"] == "applied"
    logged = db.session.get(MaintenanceLogEntry, fixed["record_id"])
    assert (logged.kind, logged.disposal_location) == ("disposal", "Town transfer station")
    assert db.session.scalar(select(Photo.log_entry_id)) == logged.id


def test_a_notice_keeps_the_id_the_tablet_made(site):
    inspector, permit, tablet = site
    op = new_op("notice.give", new_id(), {"permit_id": permit.id, "inspection_type": "erosion_control",
                                          "planned_for": (utcnow() + dt.timedelta(hours=30)).isoformat()})
    assert tablet.push([op])[0]["id"] == op["record_id"]
    assert db.session.get(InspectionNotice, op["record_id"]).given_by_id == inspector.id
    requeued = new_op("notice.give", op["record_id"], op["payload"])
    assert tablet.push([requeued])[0]["status"] == "duplicate" and count(InspectionNotice) == 1


def test_device_made_ids_must_be_uuids(site):
    _inspector, permit, tablet = site
    bad = new_op("om.log", "entry-1", {"permit_id": permit.id})
    status, body = _push_raw(tablet, [bad])
    assert status == 422 and "UUID" in body["problems"][0]["reasons"]["record_id"]


def _push_raw(client: SyncClient, ops: list[dict]) -> tuple[int, dict]:
    from sync.client import SyncError

    try:
        return 200, client._json("POST", "/sync/push", {"ops": ops})
    except SyncError as error:
        return error.status, error.body


def test_an_annual_om_certification_signed_on_a_device(make, central, device_token, blobs):
    from inspect_app.certifications import services as om
    from inspect_app.certifications.models import OMCertification

    owner = make.user("permittee")
    from inspect_app.certifications.models import ResponsibleParty

    permit = make.permit(owner=owner, construction_started_on=dt.date(2024, 5, 1))
    permit.status, permit.completed_on = "completed", dt.date(2025, 6, 1)
    # The plan binds its owner: a certification listing no responsible party is refused (issue 32).
    db.session.add(ResponsibleParty(permit_id=permit.id, user_id=owner.id, name=owner.name, role="owner",
                                    starts_on=permit.completed_on))
    db.session.commit()
    tablet = SyncClient(central.url, device_token(owner))
    period_start = om.next_period(permit).start
    tablet.upload_blob(blobs["signature"], "image/png")
    # A device naming a signer of its own (as devices did before): the signer is still the token's user.
    payload = {"permit_id": permit.id, "period_start": period_start.isoformat(),
               "signer_name": "Maple Ridge Homes LLC, by its manager", "signature_sha256": sha(blobs["signature"])}

    op = new_op("om.certify", new_id(), payload)
    assert tablet.push([op])[0]["status"] == "applied"
    certification = db.session.get(OMCertification, op["record_id"])
    assert (certification.period_start, certification.status) == (period_start, "submitted")
    assert (certification.signer_name, certification.submitted_by_id) == (owner.name, owner.id)
    assert certification.signature_sha256 == sha(blobs["signature"])
    assert tablet.push([op])[0]["status"] == "duplicate"

    # A second device signed the same period offline: the period is certified, so it is refused.
    late = new_op("om.certify", new_id(), payload)
    answer = tablet.push([late])[0]
    assert answer["status"] == "rejected" and "payload.period_start" in answer["reasons"]
    assert count(OMCertification) == 1


def test_a_notice_given_from_a_tablet_reaches_the_town_not_the_permit_holder(site, make, client):
    """§380-16 C(3): the 24-hour notice tells the town when the engineer will inspect. The permit page shows it to
    inspectors and agents alone; the change feed gave it, with its note, to the permit holder's devices too."""
    inspector, permit, tablet = site
    owner, agent = make.user("permittee"), make.user("agent")
    permit.owner_id = owner.id
    db.session.commit()
    op = new_op("notice.give", new_id(), {"permit_id": permit.id, "inspection_type": "erosion_control",
                                          "planned_for": (utcnow() + dt.timedelta(hours=30)).isoformat(),
                                          "note": "Tuesday 7 am, unannounced to the contractor"})
    assert tablet.push([op])[0]["status"] == "applied"

    def feed(user) -> list[str]:
        token = create_device(None, user, "tablet")[1]
        db.session.commit()
        answer = client.get("/sync/changes", headers={"Authorization": f"Bearer {token}"})
        return [c["entity_id"] for c in answer.json["changes"] if c["entity"] == "inspection_notices"]

    assert feed(owner) == [] and feed(agent) == [op["record_id"]]
    assert feed(inspector) == [op["record_id"]]  # the engineer's other devices
