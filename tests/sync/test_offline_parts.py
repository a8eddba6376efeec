"""The parts of an offline report the online form grows by saving the draft: a walk-through's punch list
(§380-16 C(4)(d)) and an erosion-control report's typed "other controls", pushed inside
`inspection.submit` to a live central record. They arrive under the device's ids, their answers stay
theirs, a replay stores nothing twice, and bad ones are refused with reasons and leave nothing behind.
"""
from __future__ import annotations

import datetime as dt
import hashlib

import pytest
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Finding, Inspection, PunchListItem
from inspect_app.inspections import queries
from inspect_app.permits.services import profile_of
from inspect_app.types import LOCAL_TZ, new_id, utcnow
from sync.client import SyncClient, SyncError, new_op
from tests.builders import signature_png


def count(model, *where) -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(model).where(*where))


@pytest.fixture
def site(make, central, device_token):
    """An inspector's tablet (a client with its token, the signature uploaded) and the permit it holds."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"])
    tablet = SyncClient(central.url, device_token(inspector))
    signature = signature_png()
    tablet.upload_blob(signature, "image/png")
    return inspector, permit, tablet, hashlib.sha256(signature).hexdigest()


def report(permit, inspector, signature_sha: str, type_: str, controls=(), answer: str = "yes",
           form: dict | None = None, **payload) -> dict:
    """An inspection.submit operation with every checklist row answered (typed controls' rows too)."""
    subjects = {"site": ["site"], "area": [a.id for a in permit.areas], "structure": [s.id for s in permit.structures],
                "control": [s.id for s in permit.structures if s.kind == "bmp"] + [c["id"] for c in controls],
                "pipe": [s.id for s in permit.structures if s.kind == "pipe"]}
    fields = {f"answer-{item.key}-{subject}": answer
              for item in profile_of(permit).inspection_type(type_).checklist for subject in subjects[item.per]}
    fields |= {"evaluation": "compliant"}
    if controls:
        fields["controls"] = "\n".join(c["name"] for c in controls)
    body = {"permit_id": permit.id, "type": type_,
            "performed_at": (utcnow() - dt.timedelta(hours=1)).astimezone(LOCAL_TZ).isoformat(),
            "latitude": None, "longitude": None, "form": {**fields, **(form or {})},
            "signature_sha256": signature_sha, "controls": list(controls), **payload}
    return new_op("inspection.submit", new_id(), body)


def push_raw(tablet: SyncClient, op: dict) -> tuple[int, dict]:
    """The HTTP status and body of one push, a 422 included."""
    try:
        return 200, tablet._json("POST", "/sync/push", {"ops": [op]})
    except SyncError as error:
        return error.status, error.body


def nothing_stored() -> None:
    for model in (Inspection, PunchListItem, ChecklistAnswer, Finding):
        assert count(model) == 0, model
    assert count(AuditEntry, AuditEntry.entity.in_(["inspections", "punch_list_items"])) == 0


def test_a_walk_through_punch_list_arrives_under_the_device_ids_once(site):
    inspector, permit, tablet, signature = site
    items = [{"id": new_id(), "description": "Loam and seed the swale side slopes"},
             {"id": new_id(), "description": "Remove the silt fence at the north edge"}]
    op = report(permit, inspector, signature, "walk_through", punch_list=items)
    answer = tablet.push([op])[0]
    assert answer["status"] == "applied", answer

    walk_through = db.session.get(Inspection, op["record_id"])
    assert walk_through.status == "submitted"
    stored = {i.id: i for i in queries.punch_items_of(walk_through)}
    assert {k: v.description for k, v in stored.items()} == {i["id"]: i["description"] for i in items}
    assert count(AuditEntry, AuditEntry.action == "punch.create") == 2
    # The final inspection has them to resolve.
    assert {i.id for i in queries.open_punch_items(permit)} == {i["id"] for i in items}

    # The answer was lost: the same operation again, then as a new operation for the same report.
    assert tablet.push([op])[0]["status"] == "duplicate"
    assert tablet.push([new_op("inspection.submit", op["record_id"], op["payload"])])[0]["status"] == "duplicate"
    assert count(PunchListItem) == 2 and count(Inspection) == 1
    assert count(AuditEntry, AuditEntry.action == "punch.create") == 2


def test_typed_controls_keep_the_device_ids_and_their_answers(site):
    inspector, permit, tablet, signature = site
    controls = [{"id": new_id(), "name": "Inlet protection CB-2"}, {"id": new_id(), "name": "Wattle, west slope"}]
    wattle = controls[1]["id"]
    op = report(permit, inspector, signature, "erosion_control", controls=controls, form={
        f"answer-control_effective-{wattle}": "no", f"note-control_effective-{wattle}": "Undercut at the toe",
        # A "no" comes with its fix and corrective action (CGP 2022 Part 5.1; tests/sync/test_cgp_checks_sync.py).
        f"fix-control_effective-{wattle}-repair": "Re-stake the wattle",
        f"fix-control_effective-{wattle}-first_observed": utcnow().astimezone(LOCAL_TZ).date().isoformat(),
        f"fix-control_effective-{wattle}-kind": "routine_maintenance",
        f"fix-control_effective-{wattle}-owner_name": "Site contractor",
        "evaluation": "violations", "corrective_steps": "Re-stake the wattle."})
    answer = tablet.push([op])[0]
    assert answer["status"] == "applied", answer

    inspection = db.session.get(Inspection, op["record_id"])
    assert inspection.details["controls"] == controls
    kept = {(a.item_key, a.subject_id): (a.answer, a.note) for a in inspection.answers}
    assert kept[("control_effective", wattle)] == ("no", "Undercut at the toe")
    assert kept[("control_installed", controls[0]["id"])] == ("yes", None)
    # The report shows each control by name in its checklist rows.
    rows = dict(queries.checklist(inspection, inspection.details))
    assert [s.name for s in next(found for item, found in rows.items() if item.key == "control_effective")] == [
        "Inlet protection CB-2", "Wattle, west slope"]

    assert tablet.push([new_op("inspection.submit", op["record_id"], op["payload"])])[0]["status"] == "duplicate"
    assert count(Inspection) == 1
    assert count(ChecklistAnswer, ChecklistAnswer.subject_id == wattle) == 3


def test_a_control_typed_without_its_id_is_new_and_its_unanswered_rows_refuse_the_report(site):
    inspector, permit, tablet, signature = site
    controls = [{"id": new_id(), "name": "Inlet protection CB-2"}]
    op = report(permit, inspector, signature, "erosion_control", controls=controls,
                form={"controls": "Inlet protection CB-2\nWattle, west slope"})
    answer = tablet.push([op])[0]
    assert answer["status"] == "rejected"
    assert "Wattle, west slope — This control is installed as designed: answer yes, no or n/a." in " ".join(answer["reasons"].values())
    assert not any(controls[0]["id"] in field for field in answer["reasons"])  # its rows were answered
    nothing_stored()


@pytest.mark.parametrize(("type_", "change", "field", "words"), [
    ("erosion_control", {"punch_list": [{"id": new_id(), "description": "Seed the swale"}]},
     "payload.punch_list", "Only a walk-through"),
    ("walk_through", {"controls": [{"id": new_id(), "name": "Silt fence"}]},
     "payload.controls", "Only an erosion control inspection"),
    ("walk_through", {"punch_list": [{"id": "c0ffee00-0000-4000-8000-000000000001", "description": "Seed"},
                                     {"id": "C0FFEE00-0000-4000-8000-000000000001", "description": "Loam"}]},
     "payload", "an id of its own"),
    ("walk_through", {"punch_list": [{"id": new_id(), "description": "  "}]},
     "payload.punch_list.0.description", "Describe the remaining work"),
    ("erosion_control", {"controls": [{"id": new_id(), "name": "Silt fence"}, {"id": new_id(), "name": "silt fence "}]},
     "payload.controls.1.name", "listed once"),
    ("erosion_control", {"controls": [{"id": new_id(), "name": "   "}]},
     "payload.controls.0.name", "Give the control's name"),
])
def test_a_wrong_punch_list_or_control_is_rejected_with_its_reason_and_nothing_stored(site, type_, change, field,
                                                                                    words):
    inspector, permit, tablet, signature = site
    op = report(permit, inspector, signature, type_, **change)
    answer = tablet.push([op])[0]
    assert answer["status"] == "rejected"
    assert words in answer["reasons"][field]
    nothing_stored()
    assert tablet.push([op])[0]["original"]["status"] == "rejected"  # a replay changes nothing


@pytest.mark.parametrize(("change", "field"), [
    ({"punch_list": [{"id": "punch-1", "description": "Seed the swale"}]}, "payload.punch_list.0.id"),
    ({"punch_list": [{"id": new_id(), "description": "x" * 2001}]}, "payload.punch_list.0.description"),
    ({"controls": [{"id": new_id(), "name": "x" * 121}]}, "payload.controls.0.name"),
    ({"controls": [{"id": new_id(), "name": f"Control {n}"} for n in range(101)]}, "payload.controls"),
])
def test_a_malformed_punch_list_or_control_list_is_a_422_naming_the_field(site, change, field):
    inspector, permit, tablet, signature = site
    type_ = "walk_through" if "punch_list" in change else "erosion_control"
    status, body = push_raw(tablet, report(permit, inspector, signature, type_, **change))
    assert status == 422 and field in body["problems"][0]["reasons"]
    nothing_stored()


def test_a_punch_item_id_another_walk_through_has_is_refused(site):
    inspector, permit, tablet, signature = site
    first = report(permit, inspector, signature, "walk_through",
                   punch_list=[{"id": new_id(), "description": "Seed the swale"}])
    assert tablet.push([first])[0]["status"] == "applied"
    again = report(permit, inspector, signature, "walk_through", punch_list=first["payload"]["punch_list"])
    answer = tablet.push([again])[0]
    assert answer["status"] == "rejected"
    assert answer["reasons"] == {"payload.punch_list.0.id": "Another punch-list item already has this id."}
    assert count(Inspection) == 1 and count(PunchListItem) == 1
