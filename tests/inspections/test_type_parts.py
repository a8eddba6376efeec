"""The parts of a report that depend on its type: stabilization clocks, pre-bury per structure,
the walk-through's punch list carried to the final, and a failed final (§380-16 C(4))."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
from types import SimpleNamespace

import pytest
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.enforcement.models import NoticeOfViolation, StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import Finding, Inspection, PunchListItem
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.types import LOCAL_TZ, utcnow
from tests.inspections.report_helpers import (error_beside, filled, mail_to, save_with_finding, save_with_punch,
                                              start, submit)


@pytest.fixture
def site(make):
    inspector, agent = make.user("inspector"), make.user("agent")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 15))
    return SimpleNamespace(permit=permit, inspector=inspector, agent=agent)


def _area(permit, name: str, ceased_days_ago: float | None, initiated_days_ago: float | None = None):
    area = permits.add_area(None, permit, name, Decimal("0.400"), since=utcnow() - dt.timedelta(days=30))
    if ceased_days_ago is not None:
        permits.change_area_status(None, area, "activity_ceased", utcnow() - dt.timedelta(days=ceased_days_ago))
    if initiated_days_ago is not None:
        permits.change_area_status(None, area, "stabilization_initiated",
                                   utcnow() - dt.timedelta(days=initiated_days_ago))
    db.session.commit()
    return area


def test_an_area_past_its_stabilization_deadline_becomes_a_violation_by_itself(site, signed_in):
    late = _area(site.permit, "Lot 3 pad", ceased_days_ago=9)
    # Started in time (CGP 2022 Part 2.2.14.a.i), and inside Longmeadow's 7 days to complete.
    running = _area(site.permit, "Driveway", ceased_days_ago=2, initiated_days_ago=1.9)
    _area(site.permit, "Building pad", ceased_days_ago=None)
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")

    page = client.get(f"/inspections/{inspection.id}").text
    late_row = page.split(f'id="clock-{late.id}"')[1].split("</tr>")[0]
    assert "Overdue: a violation" in late_row
    deadline = (late.status_since.astimezone(LOCAL_TZ).date() + dt.timedelta(days=7)).strftime("%b %-d, %Y")
    assert deadline in late_row
    assert "Clock running" in page.split(f'id="clock-{running.id}"')[1].split("</tr>")[0]

    # "In compliance" contradicts an overdue area: refused, with the reason beside the evaluation.
    refused = submit(client, inspection)
    assert refused.status_code == 422
    assert "Lot 3 pad" in error_beside(refused.text, "evaluation") and "§380-11 C(3)(a)" in error_beside(refused.text, "evaluation")

    assert submit(client, inspection, evaluation="violations", corrective_steps="Seed and mulch Lot 3 pad today.").status_code == 303
    finding = db.session.scalar(select(Finding).where(Finding.inspection_id == inspection.id))
    assert (finding.area_id, finding.is_automatic, finding.is_violation) == (late.id, True, True)
    assert finding.citation == "§380-11 C(3)(a)" and "Lot 3 pad" in finding.description
    assert "Lot 3 pad" in client.get(f"/inspections/{inspection.id}").text

    # The next inspection finds it still open: no second finding for the same area.
    again = start(client, site.permit, "erosion_control")
    assert submit(client, again, evaluation="violations", corrective_steps="Still to do.").status_code == 303
    assert db.session.scalar(select(func.count()).select_from(Finding).where(Finding.area_id == late.id)) == 1


def test_erosion_controls_are_answered_one_by_one(site, signed_in):
    permits.add_structure(None, site.permit, name="Sediment basin SB-1", kind="bmp", is_underground=False)
    db.session.commit()
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    assert client.post(f"/inspections/{inspection.id}", filled(page, controls="Silt fence, north\nInlet bag CB-2")).status_code == 303
    page = client.get(f"/inspections/{inspection.id}").text
    for control in ("Sediment basin SB-1", "Silt fence, north", "Inlet bag CB-2"):
        assert page.count(f"<legend>{control}</legend>") == 3  # installed, maintained, effective
    assert submit(client, inspection).status_code == 303
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    controls = {c["id"] for c in report.details["controls"]}
    assert {a.subject_id for a in report.answers if a.item_key == "control_effective"} >= controls


def test_a_control_typed_twice_in_another_case_is_one_control(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    assert client.post(f"/inspections/{inspection.id}", filled(page, controls="Silt fence\nsilt fence")).status_code == 303
    # Saved a second time (its ids now known): still one control, one set of answers.
    page = client.get(f"/inspections/{inspection.id}").text
    assert client.post(f"/inspections/{inspection.id}", filled(page, controls="Silt fence\nSILT FENCE")).status_code == 303
    db.session.expire_all()
    controls = db.session.get(Inspection, inspection.id).details["controls"]
    assert [c["name"] for c in controls] == ["Silt fence"]
    page = client.get(f"/inspections/{inspection.id}").text
    assert page.count("<legend>Silt fence</legend>") == 3


def test_pre_bury_is_per_underground_structure(site, signed_in):
    first = permits.add_structure(None, site.permit, name="Infiltration system IS-1", kind="infiltration",
                                  design_size="40 ft x 12 ft", material="HDPE chambers")
    second = permits.add_structure(None, site.permit, name="Drain line D-2", kind="pipe")
    above = permits.add_structure(None, site.permit, name="Rain garden RG-1", kind="bmp", is_underground=False)
    db.session.commit()
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "pre_bury")
    page = client.get(f"/inspections/{inspection.id}").text
    assert f'id="pb-{first.id}"' in page and f'id="pb-{second.id}"' in page and f'id="pb-{above.id}"' not in page

    # Only IS-1 is ready to backfill: its items are required, D-2's are not.
    data = filled(page, **{f"pb-{second.id}-covered": None, f"pb-{first.id}-as_designed": "no",
                           f"pb-{first.id}-size": "38 ft x 12 ft", f"pb-{first.id}-separation_ft": "2.5"})
    data = {k: v for k, v in data.items() if second.id not in k}
    missing = f"answer-photos_before_cover-{first.id}"
    del data[missing]
    refused = client.post(f"/inspections/{inspection.id}/submit", data)
    assert refused.status_code == 422 and "Infiltration system IS-1" in error_beside(refused.text, missing)
    assert error_beside(refused.text, f"answer-photos_before_cover-{second.id}") == ""

    assert client.post(f"/inspections/{inspection.id}/submit", {**data, missing: "yes"}).status_code == 303
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    part = report.details["structures"][first.id]
    assert part == {"covered": True, "as_designed": "no", "size": "38 ft x 12 ft", "invert": None,
                    "material": None, "groundwater_separation_ft": 2.5}
    assert report.details["structures"][second.id]["covered"] is False
    assert {a.subject_id for a in report.answers} == {first.id}
    shown = client.get(f"/inspections/{report.id}").text
    assert "Infiltration system IS-1: NOT as designed" in shown and "38 ft x 12 ft" in shown

    # The next pre-bury starts with the structure not yet inspected.
    later = start(client, site.permit, "pre_bury")
    assert later.details["structures"][second.id]["covered"] and not later.details["structures"][first.id]["covered"]


def test_the_walk_through_punch_list_is_resolved_item_by_item_at_the_final(site, signed_in):
    client = signed_in(site.inspector)
    walk = start(client, site.permit, "walk_through")
    saved = save_with_punch(client, walk, "Loam and seed the swale", "Clean catch basin CB-2", "Mistake")
    assert saved.status_code == 303
    listed = client.get(f"/inspections/{walk.id}").text.split('id="punch-list"')[1].split("</section>")[0]
    assert "Loam and seed the swale" in listed and "Clean catch basin CB-2" in listed
    mistake = db.session.scalar(select(PunchListItem).where(PunchListItem.description == "Mistake"))
    response = client.post(f"/punch/{mistake.id}/delete", htmx="punch-list")
    assert response.status_code == 200 and response.text.lstrip().startswith('<section class="card" id="punch-list">')
    empty = save_with_punch(client, walk, " ")
    assert empty.status_code == 422 and "Describe the remaining work" in empty.text

    # A draft walk-through's list is not carried yet.
    final = start(client, site.permit, "final")
    assert "Loam and seed the swale" not in client.get(f"/inspections/{final.id}").text
    assert submit(client, walk).status_code == 303

    items = {i.description: i for i in db.session.scalars(select(PunchListItem))}
    assert set(items) == {"Loam and seed the swale", "Clean catch basin CB-2"}
    page = client.get(f"/inspections/{final.id}").text
    data = filled(page)
    swale, basin = items["Loam and seed the swale"], items["Clean catch basin CB-2"]
    data[f"punch-{basin.id}"] = ""
    refused = client.post(f"/inspections/{final.id}/submit", data)
    assert refused.status_code == 422 and error_beside(refused.text, f"punch-{basin.id}").startswith("Say how")
    assert error_beside(refused.text, f"punch-{swale.id}") == ""
    db.session.expire_all()
    assert db.session.get(PunchListItem, swale.id).resolved_in_id is None  # nothing kept

    data[f"punch-{basin.id}"] = "Vacuumed out on Tuesday"
    assert client.post(f"/inspections/{final.id}/submit", data).status_code == 303
    db.session.expire_all()
    basin = db.session.get(PunchListItem, basin.id)
    assert (basin.resolved_in_id, basin.resolution) == (final.id, "Vacuumed out on Tuesday")
    assert db.session.get(PunchListItem, swale.id).resolved_in_id == final.id
    assert "Vacuumed out on Tuesday" in client.get(f"/inspections/{final.id}").text


def test_a_final_needs_a_video_of_every_pipe_and_the_storm(site, signed_in):
    pipe = permits.add_structure(None, site.permit, name="Pipe run P-1", kind="pipe")
    db.session.commit()
    client = signed_in(site.inspector)
    final = start(client, site.permit, "final")
    page = client.get(f"/inspections/{final.id}").text
    data = filled(page, storm_depth_in="", certified=None, **{f"video-{pipe.id}-reference": ""})
    refused = client.post(f"/inspections/{final.id}/submit", data)
    assert refused.status_code == 422
    assert "Pipe run P-1" in error_beside(refused.text, f"video-{pipe.id}")
    assert error_beside(refused.text, "storm_depth_in").startswith("Give the depth")
    assert error_beside(refused.text, "certification").startswith("Give the engineer's certification")
    unknown = client.post(f"/inspections/{final.id}/submit", {**data, f"video-{pipe.id}-blob_sha256": "ab" * 32})
    assert "No uploaded file has that SHA-256" in error_beside(unknown.text, f"video-{pipe.id}")


def test_a_southborough_final_cites_southboroughs_clauses_not_longmeadows(make, signed_in):
    """The certification the final offers, and its refusal of a missing pipe video, cited Longmeadow's
    §380-16 C(4)(e)[3] and C(4)(e)[1] on Southborough's reports (whose as-built certification is §9.6)."""
    engineer = make.user("inspector")
    permit = make.permit("southborough", inspectors=[engineer], structures=["8-inch PVC run P-2"])
    client = signed_in(engineer)
    final = start(client, permit, "final")
    page = client.get(f"/inspections/{final.id}").text
    assert ("the as-built drawing(s) are certified by a Registered Professional Engineer (§9.6)." in page
            and "§380" not in page and "my engineering stamp" not in page)
    pipe = permit.structures[0]
    refused = client.post(f"/inspections/{final.id}/submit", filled(page, **{f"video-{pipe.id}-reference": ""}))
    assert error_beside(refused.text, f"video-{pipe.id}") == (
        "Give the date and the video (reference or uploaded file) of 8-inch PVC run P-2.")
    longmeadow = make.permit(inspectors=[engineer])
    page = client.get(f"/inspections/{start(client, longmeadow, 'final').id}").text
    assert "drawing(s) (§380-16 C(4)(e)[3])." in page


def test_a_failed_final_brings_a_notice_of_violation_and_a_stop_work_order(site, signed_in):
    client = signed_in(site.inspector)
    final = start(client, site.permit, "final")
    assert save_with_finding(client, final, "Basin outlet built 1 ft higher than the plan", severity="critical",
                             is_violation="y", citation="§380-16 C(4)(e)[5]").status_code == 303
    response = submit(client, final, evaluation="violations", certified=None,
                      corrective_steps="Rebuild the outlet control structure to the approved elevation.",
                      **{"answer-complies_with_plan-site": "no"})
    assert response.status_code == 303

    db.session.expire_all()
    permit = site.permit
    db.session.refresh(permit)
    assert permit.status == "stop_work"
    order = db.session.scalar(select(StopWorkOrder).where(StopWorkOrder.permit_id == permit.id))
    notice = db.session.scalar(select(NoticeOfViolation).where(NoticeOfViolation.permit_id == permit.id))
    assert order.inspection_id == final.id and order.issued_by_id == site.inspector.id and order.is_standing
    assert [f.description for f in order.findings] == ["Basin outlet built 1 ft higher than the plan"]
    assert notice.inspection_id == final.id and notice.stop_work_order_id == order.id
    assert "Rebuild the outlet control structure" in notice.text
    assert db.session.scalar(select(func.count()).select_from(AuditEntry).where(
        AuditEntry.permit_id == permit.id, AuditEntry.action == "permit.status")) == 1
    assert any(m.subject.startswith("Stop-work order") for m in mail_to("applicant@example.org"))
    assert "Stop-work order in effect" in client.get(f"/permits/{permit.id}").text


def test_an_operational_failure_of_a_system_built_to_plan_is_corrected_by_the_permittee_with_no_order(
        site, signed_in):
    """§380-16 C(4)(e)[4]: "If the system is found to be inadequate by virtue of physical evidence of operational
    failure, even though it was built as called for in the stormwater management plan, the system shall be corrected
    by the permittee. If the permittee fails to act, the Town of Longmeadow may use the surety bond". Only [5] ("If
    the system does not comply with the Plan") brings the notice of violation and the stop-work order: a final
    failing on operation alone was mailed as "does not comply with the approved plan" and stopped the work."""
    client = signed_in(site.inspector)
    final = start(client, site.permit, "final")
    response = submit(client, final, evaluation="violations", certified=None,
                      corrective_steps="Rebuild the basin's infiltration bed: it does not drain.",
                      **{"answer-no_operational_failure-site": "no", "answer-complies_with_plan-site": "yes"})
    assert response.status_code == 303
    db.session.expire_all()
    assert db.session.scalars(select(StopWorkOrder).where(StopWorkOrder.permit_id == site.permit.id)).all() == []
    assert db.session.scalars(select(NoticeOfViolation).where(NoticeOfViolation.permit_id == site.permit.id)).all() == []
    assert db.session.get(Permit, site.permit.id).status != "stop_work"
    # The report itself, with the steps to correct it (§380-16 C(4)(f)[1][h]), goes to the applicant.
    assert any("Rebuild the basin's infiltration bed" in m.body for m in mail_to("applicant@example.org"))


@pytest.mark.parametrize("answer", ["answer-all_work_complete-site", "video", "answer-storm_performance-site",
                                    "answer-no_operational_failure-site", "answer-punch_list_closed-site",
                                    "answer-complies_with_plan-site", "answer-engineer_certification-site",
                                    "answer-as_built_drawings-site"])
def test_a_no_on_all_work_complete_or_a_pipe_video_makes_the_final_a_violation(answer, site, signed_in):
    """A final is not compliant with work outstanding or a pipe not videoed (§380-16 C(4)(e)[1]), a system not
    effective in an actual storm (§380-16 C(4)(e)[2]) or operational failure to correct (§380-16 C(4)(e)[4]); nor
    with the punch list not done (§380-16 C(4)(d)), a system that does not comply with the plan (§380-16
    C(4)(e)[5]: "the applicant shall be notified in writing of the violation"), no engineer's certification
    (§380-16 C(4)(e)[3]) or no certified as-built drawings (§380-15)."""
    pipe = permits.add_structure(None, site.permit, name="Pipe run P-1", kind="pipe")
    db.session.commit()
    client = signed_in(site.inspector)
    final = start(client, site.permit, "final")
    field = answer if answer != "video" else f"answer-pipe_video-{pipe.id}"
    refused = submit(client, final, **{field: "no"})
    assert refused.status_code == 422
    message = error_beside(refused.text, "evaluation")
    assert "Answered “no”" in message and "must be “violations”" in message
    assert db.session.get(Inspection, final.id).status == "draft"
    assert submit(client, final, **{field: "no"}, evaluation="violations", certified=None,
                  corrective_steps="Finish the work and video the pipe.").status_code == 303


def test_the_finals_storm_is_one_the_system_was_there_for(site, signed_in):
    """§380-16 C(4)(e)[2]: "The final inspection shall also evaluate the effectiveness of the system in an actual
    storm". A storm of 2019 was accepted for a permit whose construction started in 2026."""
    client = signed_in(site.inspector)
    final = start(client, site.permit, "final")
    refused = submit(client, final, storm_date="2019-08-01")
    assert refused.status_code == 422
    started = site.permit.construction_started_on
    assert error_beside(refused.text, "storm_date") == (
        f"The date cannot be before construction started on this permit ({started:%b %-d, %Y}).")
    assert db.session.get(Inspection, final.id).status == "draft"
