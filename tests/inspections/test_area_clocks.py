"""A report's stabilization clocks (§380-11 C(3)(a)) read every area's timeline as it stands, a change made
earlier in the same transaction included."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from inspect_app.extensions import db
from inspect_app.inspections import queries
from inspect_app.permits import services as permits
from inspect_app.permits.services import profile_of
from inspect_app.types import utcnow


def test_the_clocks_count_an_area_change_not_yet_written(app, make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    now = utcnow().replace(microsecond=0)
    north = permits.add_area(None, permit, "North", Decimal("0.5"), since=now - dt.timedelta(days=30))
    permits.add_area(None, permit, "South", Decimal("0.5"), since=now - dt.timedelta(days=30))
    db.session.flush()
    before = queries.area_clocks(permit, profile_of(permit), now)
    assert [(c.area.name, c.status, c.ceased_at) for c in before] == [("North", "disturbed", None),
                                                                     ("South", "disturbed", None)]
    # As a sync push records it: the event is written as a row after the next flush, not as an object.
    ceased = now - dt.timedelta(days=20)
    permits.change_area_status(None, north, "activity_ceased", ceased, batched=True)
    after = {c.area.name: c for c in queries.area_clocks(permit, profile_of(permit), now)}
    assert (after["North"].status, after["North"].ceased_at) == ("activity_ceased", ceased)
    assert after["North"].overdue  # 20 days without stabilization is past the deadline
    assert (after["South"].status, after["South"].ceased_at) == ("disturbed", None)


def test_a_reports_clocks_stand_as_at_its_time_whatever_came_after(app, make):
    """An older report's clocks are the areas' as of its inspection: an area stabilized since, or disturbed again,
    does not change them (the history after it is not read)."""
    permit = make.permit()
    now = utcnow().replace(microsecond=0)
    area = permits.add_area(None, permit, "East", Decimal("1.0"), since=now - dt.timedelta(days=60))
    ceased, inspected = now - dt.timedelta(days=40), now - dt.timedelta(days=30)
    permits.change_area_status(None, area, "activity_ceased", ceased)
    db.session.flush()
    then = [(c.area.name, c.status, c.ceased_at, c.overdue) for c in queries.area_clocks(permit, profile_of(permit),
                                                                                          inspected)]
    permits.change_area_status(None, area, "stabilized", now - dt.timedelta(days=10))
    permits.change_area_status(None, area, "disturbed", now - dt.timedelta(days=5))
    db.session.flush()

    assert [(c.area.name, c.status, c.ceased_at, c.overdue)
            for c in queries.area_clocks(permit, profile_of(permit), inspected)] == then
    assert then == [("East", "activity_ceased", ceased, True)]  # 10 days after ceasing, none initiated
    [today] = queries.area_clocks(permit, profile_of(permit), now)
    assert (today.status, today.ceased_at) == ("disturbed", None)
