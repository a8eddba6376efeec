"""What one permit costs does not grow with the number of other permits (issue 33: 50,000 permits, state-wide).

Wall times are noisy on a shared machine; the work SQLite does is not. These tests count the virtual machine
steps of SQLite (its progress handler) for one permit's commit and one device's pull, with few and with many
other permits, and the statements of the dashboard. On PostgreSQL the step counter does not exist: the tests
that need it are skipped there (`bench/dashboard.py` measures the same on any database).
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from contextlib import contextmanager

import pytest
from sqlalchemy import event, insert, select

from inspect_app.accounts.policy import people_to_choose
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.permits.models import Permit, PermitAssignment
from inspect_app.types import new_id, utcnow

STEP = 100  # SQLite calls the handler every STEP virtual machine instructions


@pytest.fixture
def sqlite_only(app):
    if db.engine.dialect.name != "sqlite":
        pytest.skip("counts SQLite's virtual machine steps")


@contextmanager
def sqlite_steps():
    """The virtual machine steps SQLite runs inside the block (in units of STEP), as a one-item list."""
    steps = [0]

    def tick() -> int:
        steps[0] += 1
        return 0  # go on

    def watch(conn, cursor, statement, parameters, context, executemany):
        conn.connection.driver_connection.set_progress_handler(tick, STEP)

    event.listen(db.engine, "before_cursor_execute", watch)
    try:
        yield steps
    finally:
        event.remove(db.engine, "before_cursor_execute", watch)
        with db.engine.connect() as connection:
            connection.connection.driver_connection.set_progress_handler(None, STEP)


def other_permits(town_id: str, count: int, reports: int = 25) -> None:
    """`count` more permits of the town, each with `reports` submitted reports, written as plain rows."""
    now = utcnow()
    permits, inspections = [], []
    for n in range(count):
        pid = new_id()
        permits.append(dict(id=pid, jurisdiction_id=town_id, number=f"OTHER-{n:04d}", site_address=f"{n} Elm Street",
                            latitude=42.05, longitude=-72.58, owner_name="Owner", applicant_name="Applicant",
                            disturbed_acres=1, is_redevelopment=False, sensitive_waters=False,
                            cgp_schedule="every_7_days", issued_on=dt.date(2026, 1, 5), status="active", revision=1,
                            created_at=now, updated_at=now))
        inspections += [dict(id=new_id(), permit_id=pid, type="erosion_control", status="submitted",
                             performed_at=now - dt.timedelta(days=7 * k), location_source="permit",
                             inspector_name="Inspector", inspector_credentials="PE", weather_status="complete",
                             details={}, notice_given=True, under_stop_work=False, created_at=now)
                        for k in range(reports)]
    db.session.execute(insert(Permit), permits)
    if inspections:
        db.session.execute(insert(Inspection), inspections)
    db.session.commit()


def steps_of(work: Callable[[], None]) -> int:
    with sqlite_steps() as steps:
        work()
    return steps[0]


def test_a_change_to_one_permit_costs_the_same_whatever_the_number_of_other_permits(app, make, sqlite_only):
    permit = make.permit(inspectors=[make.user("inspector")], areas=["North slope"])
    finding = make.finding(permit)

    def add_action() -> None:
        found = utcnow()
        db.session.add(CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="routine_maintenance",
                                        description="Re-stake the silt fence", owner_name="Contractor",
                                        discovered_at=found, due_at=found + dt.timedelta(days=1), status="open",
                                        revision=1))
        db.session.commit()

    add_action()  # the first commit of a process builds its statements
    alone = steps_of(add_action)
    other_permits(permit.jurisdiction_id, 80)  # 2,000 reports of other permits
    among_many = steps_of(add_action)

    # Before the index of drafts, finding the drafts (left out of the schedule) read every report: 4.5 times the work here.
    assert among_many < alone * 1.3, (alone, among_many)


def test_the_people_a_town_is_offered_cost_the_same_whatever_other_towns_give_them_to_do(app, make, sqlite_only):
    agent = make.user("agent")
    here = [make.user("inspector") for _ in range(3)]
    make.permit(inspectors=here)
    elsewhere = [make.user("inspector") for _ in range(6)]
    southborough = make.permit("southborough", inspectors=elsewhere).jurisdiction_id

    def offered() -> None:
        assert set(db.session.scalars(people_to_choose(agent, "inspector"))) == set(here)

    def assign_more(count: int) -> None:
        other_permits(southborough, count, reports=0)
        others = db.session.scalars(select(Permit.id).where(Permit.number.like("OTHER-%"))).all()
        db.session.execute(insert(PermitAssignment), [
            {"id": new_id(), "permit_id": pid, "user_id": inspector.id, "capacity": "design_engineer",
             "assigned_at": utcnow()} for pid in others for inspector in elsewhere])
        db.session.commit()

    offered()
    few = steps_of(offered)
    assign_more(60)  # each inspector of the other town on 60 permits more
    many = steps_of(offered)

    # Asked person by person, each inspector's every assignment in the other town was read: 6 times the work here.
    assert many < few * 1.3, (few, many)
