"""Facts read from the record: what counts, and the open-only reading giving the same open obligations."""
from __future__ import annotations

import datetime as dt
import random
from decimal import Decimal

from sqlalchemy import select

from inspect_app.certifications.models import NoticeToCorrect, OMCertification
from inspect_app.completion.models import CertificateOfCompletion
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, CorrectiveAction, Finding, Inspection
from inspect_app.permits.models import Permit
from inspect_app.rules import obligations
from inspect_app.schedule.facts import load_records
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.weather.models import StormEvent

def _visible(ob) -> tuple:
    return (ob.kind, ob.subject, ob.opens_at, ob.due_at, ob.status, ob.reason, ob.citation)


def _random_history(permit: Permit, agent, now: dt.datetime, rng: random.Random, visits: int = 10**6) -> None:
    """Years of inspections (some drafts and amendments), storms, repairs, areas and orders."""
    day = dt.timedelta(days=1)
    started = dt.datetime.combine(permit.construction_started_on, dt.time(12), tzinfo=dt.UTC)
    rows = []
    at = started - rng.choice((day * 3, -day)) if visits > 2 else started + day * rng.randint(5, 30)
    inspections = []
    while at < now and len(inspections) < visits:
        kind = rng.choices(("erosion_control", "periodic", "walk_through", "final"), (20, 2, 1, 1))[0] \
            if visits > 2 else "erosion_control"
        status = "draft" if rng.random() < 0.05 else "submitted"
        inspection = Inspection(permit_id=permit.id, type=kind, status=status, performed_at=at,
                                inspector_name="Inspector", inspector_credentials="PE")
        inspections.append(inspection)
        at += rng.choice((day * 5, day * 7, day * 9, day * 16, dt.timedelta(hours=30)))
    rows += inspections
    db.session.add_all(rows)
    db.session.flush()
    rows = [Inspection(permit_id=permit.id, type="erosion_control", status="submitted", inspector_name="I",
                       inspector_credentials="PE", performed_at=inspections[-1].performed_at + day,
                       amends_id=inspections[-1].id)] if rng.random() < 0.5 else []
    finding = Finding(inspection_id=inspections[0].id, permit_id=permit.id, description="Finding")
    db.session.add(finding)
    db.session.flush()
    for _ in range(rng.randint(0, 6)):
        found = now - day * rng.uniform(0, 60)
        done = found + day * rng.uniform(0, 10) if rng.random() < 0.6 else None
        rows.append(CorrectiveAction(finding_id=finding.id, permit_id=permit.id,
                                     kind=rng.choice(("routine_maintenance", "significant_repair")),
                                     description="Fix", owner_name="Contractor", discovered_at=found,
                                     due_at=found + 7 * day, completed_at=done))
    storm_days = {(now - day * rng.randint(0, 80)).date() for _ in range(rng.randint(0, 10) if visits > 2 else 12)}
    for storm_day in list(storm_days):
        if rng.random() < (0.3 if visits > 2 else 0.6):
            storm_days.add(storm_day + dt.timedelta(days=1))  # a multi-day storm
    rows += [StormEvent(permit_id=permit.id, day=d, depth_mm=rng.choice((5.0, 7.0, 20.0))) for d in storm_days]
    for n in range(rng.randint(0, 3)):
        area = DisturbedArea(permit_id=permit.id, name=f"Area {n}", acres=Decimal("0.5"))
        db.session.add(area)
        db.session.flush()
        at = started
        for status in rng.sample(("activity_ceased", "stabilization_initiated", "stabilized", "disturbed"), 3):
            at += day * rng.uniform(1, 40)
            if at < now:
                rows.append(AreaStatusEvent(area_id=area.id, status=status, at=at))
    if rng.random() < 0.4:
        issued = now - day * rng.uniform(1, 40)
        rows.append(StopWorkOrder(permit_id=permit.id, reason="Violations", issued_by_id=agent.id, issued_at=issued,
                                  lifted_at=issued + 5 * day if rng.random() < 0.5 else None))
    if permit.status == "completed":
        completed = now - day * rng.uniform(30, 500)
        rows.append(CertificateOfCompletion(permit_id=permit.id, issued_by_id=agent.id, issued_at=completed))
        if rng.random() < 0.5:
            rows.append(OMCertification(permit_id=permit.id, period_start=completed.date(), period_end=now.date(),
                                        signer_name="Owner", statement="Certified", submitted_at=completed + 300 * day))
        rows.append(NoticeToCorrect(permit_id=permit.id, text="Clean the basin", issued_by_id=agent.id,
                                    issued_at=now - 40 * day, cure_due_at=now - 10 * day,
                                    cured_at=now - 12 * day if rng.random() < 0.5 else None))
    db.session.add_all(rows)
    db.session.commit()


def test_open_only_reading_gives_exactly_the_open_obligations_of_the_whole_history(app, make, record):
    """The dashboard reads only what decides open obligations; read whole, the record must give the same."""
    rng, now = random.Random(20261202), record.now
    agent = make.user("agent")
    for n in range(20):
        few = n >= 16  # a site with only one or two visits, storms all around them
        permit = make.permit(
            number=f"EQ-{n}", issued_on=record.local_day(900),
            construction_started_on=record.local_day(rng.randint(40, 70) if few else rng.randint(20, 800)),
            cgp_schedule="every_14_days_and_storm" if few else rng.choice(("every_7_days", "every_14_days_and_storm")),
            sensitive_waters=rng.random() < 0.3, structures=["Pipe A"] if n % 3 == 0 else (),
        )
        if n % 5 == 4 and not few:
            permit.status = "completed"
        _random_history(permit, agent, now, rng, visits=1 + n % 2 if few else 10**6)
    scope = select(Permit)
    full = {r.permit.id: r for r in load_records(scope)}
    trimmed = {r.permit.id: r for r in load_records(scope, open_at=now)}
    assert set(full) == set(trimmed) and len(full) == 20
    compared = 0
    for pid, whole in full.items():
        assert whole.problem is None and trimmed[pid].problem is None
        expected = sorted(_visible(ob) for ob in obligations(whole.facts, whole.profile, now, history=False))
        got = sorted(_visible(ob) for ob in obligations(trimmed[pid].facts, trimmed[pid].profile, now, history=False))
        assert got == expected, whole.permit.number
        compared += len(expected)
    assert compared > 30  # the histories leave plenty open


def _timeline(signed_in, user, permit) -> str:
    return signed_in(user).get(f"/permits/{permit.id}/timeline").text


def test_a_pre_bury_inspection_answering_for_the_structure_meets_its_obligation(make, record, signed_in):
    agent = make.user("agent")
    permit = make.permit(issued_on=record.local_day(40), construction_started_on=record.local_day(30),
                         structures=["Infiltration chamber", "Pipe run B"])
    chamber = next(s for s in permit.structures if s.name == "Infiltration chamber")
    inspection = record.inspection(permit, "pre_bury", at=record.ago(days=2))
    db.session.add(ChecklistAnswer(inspection_id=inspection.id, item_key="size_as_designed", subject_id=chamber.id,
                                   answer="yes"))
    db.session.commit()
    items = [r for r in _timeline(signed_in, agent, permit).split("<tr>") if "Pre-bury inspection" in r]
    assert len(items) == 2
    assert "Met" in next(r for r in items if "Infiltration chamber" in r)
    assert "Met" not in next(r for r in items if "Pipe run B" in r)


def test_drafts_and_amendments_are_not_visits(make, record, signed_in):
    permit = make.permit(issued_on=record.local_day(40), construction_started_on=record.local_day(10))
    first = record.inspection(permit, at=record.ago(days=12))
    record.inspection(permit, at=record.ago(days=1), status="draft")  # not submitted: not the record
    # Restates the report of 12 days ago (made so: the database refuses to change a submitted report).
    record.inspection(permit, at=record.ago(days=2), amends=first)
    page = signed_in(make.user("agent")).get("/dashboard/?kind=inspection").text
    assert "Overdue" in page and "Erosion-control inspection" in page


def test_a_storm_day_needs_an_inspection_within_24_hours_of_its_end(make, record, signed_in):
    permit = make.permit(issued_on=record.local_day(60), construction_started_on=record.local_day(30),
                         cgp_schedule="every_14_days_and_storm")
    record.inspection(permit, at=record.ago(days=6))
    record.storm(permit, 3, depth_mm=7.0)  # 0.28 in, three local days ago
    record.storm(permit, 5, depth_mm=5.0)  # under 0.25 in: no storm inspection
    text = signed_in(make.user("agent")).get("/dashboard/?kind=storm_inspection").text
    assert text.count("Storm inspection</td>") == 1
    assert "0.28 in of rain" in text and "CGP 2022 Part 4.2" in text and "Overdue" in text


def test_a_certificate_of_completion_starts_the_om_certification_year(make, record, signed_in):
    agent = make.user("agent")
    permit = make.permit(issued_on=record.local_day(900), construction_started_on=record.local_day(800))
    permit.status = "completed"
    db.session.add(CertificateOfCompletion(permit_id=permit.id, issued_by_id=agent.id, issued_at=record.ago(days=400)))
    db.session.commit()
    page = signed_in(agent).get("/dashboard/?kind=om_certification").text
    assert "O&amp;M certification" in page and "§380-14 C(2)(l)" in page and "Overdue" in page
    # Construction is over: no weekly inspections are asked of it any more.
    assert "Erosion-control inspection</td>" not in signed_in(agent).get("/dashboard/").text


def test_reading_by_permit_ids_gives_what_reading_by_a_scope_gives(app, make, record):
    """The schedule's refresh reads by ids through queries built once: each call reads its own permits as of its
    own time, as a query of those permits does."""
    rng, now = random.Random(20261203), record.now
    agent = make.user("agent")
    permits = []
    for n in range(6):
        permit = make.permit(number=f"ID-{n}", issued_on=record.local_day(900),
                             construction_started_on=record.local_day(rng.randint(20, 400)),
                             cgp_schedule=rng.choice(("every_7_days", "every_14_days_and_storm")))
        _random_history(permit, agent, now, rng)
        permits.append(permit.id)
    day = dt.timedelta(days=1)
    for ids, at in ((permits[:2], now), (permits[2:], now - 30 * day), (permits[1:4], now + 10 * day), (permits, None)):
        by_scope = load_records(select(Permit).where(Permit.id.in_(ids)), open_at=at)
        by_ids = load_records(permit_ids=ids, open_at=at)
        assert {r.permit.id for r in by_ids} == set(ids)
        assert by_ids == by_scope


def _every_kind_of_row(permit: Permit, agent, record) -> None:
    """A row in each table most permits have none in, each of a kind the facts read."""
    from inspect_app.conditions.models import FrozenPeriod, SnowmeltDischarge
    from inspect_app.waivers.models import Waiver

    day, now = dt.timedelta(days=1), record.now
    found_in = Inspection(permit_id=permit.id, type="erosion_control", status="submitted", performed_at=now - 20 * day,
                          inspector_name="Inspector", inspector_credentials="PE", gauge_precip_mm=30.0)
    after = Inspection(permit_id=permit.id, type="om_facility", status="submitted", performed_at=now - 2 * day,
                       inspector_name="Inspector", inspector_credentials="PE")
    db.session.add_all([found_in, after])
    db.session.flush()
    finding = Finding(inspection_id=found_in.id, permit_id=permit.id, description="Sediment in the street",
                      is_violation=True)
    db.session.add(finding)
    db.session.flush()
    db.session.add_all([
        FrozenPeriod(permit_id=permit.id, suspended=True, starts_at=now - 90 * day, ends_at=now - 60 * day,
                     note="Frozen ground", recorded_by_id=agent.id),
        SnowmeltDischarge(permit_id=permit.id, discharge_at=now - 70 * day, snow_mm=40.0, seen_on_site=True),
        Waiver(permit_id=permit.id, requirement="pre_bury", reason="Seen on site", granted_on=record.local_day(30),
               granted_by_id=agent.id),
        CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="significant_repair", description="Sweep",
                         owner_name="Contractor", discovered_at=now - 20 * day, due_at=now - 13 * day),
        StormEvent(permit_id=permit.id, day=record.local_day(10), depth_mm=20.0),
        StopWorkOrder(permit_id=permit.id, reason="Violations", issued_by_id=agent.id, issued_at=now - 19 * day),
        NoticeToCorrect(permit_id=permit.id, text="Clean the basin", issued_by_id=agent.id, issued_at=now - 9 * day,
                        cure_due_at=now + day),
        OMCertification(permit_id=permit.id, period_start=record.local_day(400), period_end=record.local_day(35),
                        signer_name="Owner", statement="Certified", submitted_at=now - 30 * day),
    ])
    db.session.commit()


def test_tables_a_permit_has_no_row_in_are_not_read_and_every_row_of_the_others_is(app, make, record, count_queries):
    """Most permits have no stop-work order, waiver, frozen period, storm...: one statement asks which of those
    tables hold a row for the permits read, and only those are read. A permit with a row in each has each in its
    facts, read beside a permit with none; the bare one is read in a third of the statements."""
    agent = make.user("agent")
    full = make.permit(number="FULL-1", issued_on=record.local_day(900), construction_started_on=record.local_day(400),
                       structures=["Pipe A"])
    _every_kind_of_row(full, agent, record)
    bare = make.permit(number="BARE-1", issued_on=record.local_day(900), construction_started_on=record.local_day(40))
    make.inspection(bare, performed_at=record.ago(days=3))

    for at in (None, record.now):
        records = {r.permit.number: r.facts for r in load_records(permit_ids=[full.id, bare.id], open_at=at)}
        facts = records["FULL-1"]
        assert facts.structures and facts.frozen_periods and facts.snowmelts and facts.waivers
        assert facts.violation_findings and facts.corrective_actions and facts.notices_to_correct
        assert facts.stop_work_orders and facts.om_certifications
        assert any(i.kind == "om_facility" for i in facts.inspections)
        assert len(facts.storms) == 2  # the storm and the gauge's reading (Longmeadow owes storm inspections)
        empty = records["BARE-1"]
        assert not (empty.structures or empty.frozen_periods or empty.snowmelts or empty.waivers or empty.storms
                    or empty.violation_findings or empty.corrective_actions or empty.notices_to_correct
                    or empty.stop_work_orders or empty.om_certifications)
        # Alone, each reads as it did beside the other.
        assert load_records(permit_ids=[full.id], open_at=at)[0].facts == facts
        with count_queries() as statements:
            alone = load_records(permit_ids=[bare.id], open_at=at)[0].facts
        assert alone == empty
        # The permit, which tables hold a row, its areas, inspectors, inspections and reports: 6 of 17.
        assert len(statements) == 6, statements
