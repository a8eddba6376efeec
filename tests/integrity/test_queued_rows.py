"""Rows queued to be written at the next flush (audit entries and area status events of a sync push,
audit.models.add_after_flush) follow the SAVEPOINT they were queued in: kept when it is released, dropped
with it when it rolls back, and never dropped by an inner SAVEPOINT's rollback."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.audit.models import AuditEntry, add_after_flush
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import new_id, utcnow


def _event(area, status: str, note: str) -> dict:
    return {"id": new_id(), "area_id": area.id, "status": status, "at": utcnow(), "note": note,
            "inspection_id": None, "recorded_by_id": None, "recorded_at": utcnow()}


def _entry(area, note: str) -> dict:
    return {"actor_id": None, "action": "area.status", "entity": "disturbed_areas", "entity_id": area.id,
            "permit_id": area.permit_id, "before": None, "after": {"note": note}}


def _timeline(area_id: str) -> list[str]:
    db.session.expire_all()
    return [e.note or e.status for e in db.session.scalars(select(AreaStatusEvent).where(
        AreaStatusEvent.area_id == area_id).order_by(AreaStatusEvent.at))]


def _logged(area_id: str) -> list[str]:
    return [(e.after or {}).get("note") or e.action for e in db.session.scalars(select(AuditEntry).where(
        AuditEntry.entity_id == area_id).order_by(AuditEntry.commit_seq))]


def _verify(runner):
    db.session.remove()  # the command reads in its own session what is committed
    return runner.invoke(args=["audit", "verify"])


def test_rows_queued_before_a_savepoint_stay_when_it_rolls_back(make, runner):
    area = make.permit(areas=["Pad"]).areas[0]
    area_id = area.id
    # Queued with nothing else pending: no flush writes them before the SAVEPOINT begins.
    add_after_flush(db.session(), _event(area, "activity_ceased", "queued first"), AreaStatusEvent.__table__)
    add_after_flush(db.session(), _entry(area, "queued first"))
    inner = db.session.begin_nested()
    add_after_flush(db.session(), _event(area, "stabilized", "queued in the savepoint"), AreaStatusEvent.__table__)
    add_after_flush(db.session(), _entry(area, "queued in the savepoint"))
    inner.rollback()
    db.session.commit()

    assert _timeline(area_id) == ["disturbed", "queued first"]
    assert _logged(area_id) == ["area.create", "queued first"]
    result = _verify(runner)
    assert result.exit_code == 0, result.output


def test_a_status_change_in_a_released_savepoint_is_kept_and_one_rolled_back_is_dropped(make, runner):
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    area_id, since = area.id, area.status_since
    # As a sync push applies them: each change's event and entry queued as rows (batched).
    kept = db.session.begin_nested()
    permits.change_area_status(inspector, area, "activity_ceased", since + dt.timedelta(minutes=1),
                               "Work stopped", batched=True)
    kept.commit()
    outer = db.session.begin_nested()
    permits.change_area_status(inspector, area, "stabilization_initiated", since + dt.timedelta(minutes=2),
                               "Seeded", batched=True)
    refused = db.session.begin_nested()
    add_after_flush(db.session(), _event(area, "stabilized", "never kept"), AreaStatusEvent.__table__)
    add_after_flush(db.session(), _entry(area, "never kept"))
    refused.rollback()
    outer.commit()
    db.session.commit()

    assert _timeline(area_id) == ["disturbed", "Work stopped", "Seeded"]
    assert "never kept" not in _logged(area_id)
    assert db.session.get(DisturbedArea, area_id).status == "stabilization_initiated"
    result = _verify(runner)
    assert result.exit_code == 0, result.output


def test_rows_queued_in_a_savepoint_that_rolls_back_are_dropped_with_it(make):
    area = make.permit(areas=["Pad"]).areas[0]
    area_id = area.id
    savepoint = db.session.begin_nested()
    add_after_flush(db.session(), _event(area, "activity_ceased", "dropped"), AreaStatusEvent.__table__)
    add_after_flush(db.session(), _entry(area, "dropped"))
    savepoint.rollback()
    db.session.commit()

    assert _timeline(area_id) == ["disturbed"]
    assert _logged(area_id) == ["area.create"]
