"""held_rows: which of several columns hold a value, known for a block from one statement."""
from __future__ import annotations

import datetime as dt

from inspect_app import held_rows
from inspect_app.conditions.models import FrozenPeriod
from inspect_app.conditions.services import periods_of
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.waivers.models import Waiver
from inspect_app.waivers.services import waivers_of


def test_none_of_is_true_only_inside_the_block_for_the_value_and_columns_asked_about(app, make):
    inspector = make.user("inspector")
    permit, other = make.permit(inspectors=[inspector]), make.permit(inspectors=[inspector])
    db.session.add(Waiver(permit_id=permit.id, requirement="pre_bury", reason="Seen on site",
                          granted_on=dt.date(2026, 5, 1), granted_by_id=inspector.id))
    db.session.flush()
    assert not held_rows.none_of(FrozenPeriod.permit_id, permit.id)  # nothing asked: every reader asks
    with held_rows.asked(permit.id, [Waiver.permit_id, FrozenPeriod.permit_id]):
        assert not held_rows.none_of(Waiver.permit_id, permit.id)  # it has one
        assert held_rows.none_of(FrozenPeriod.permit_id, permit.id)  # it has none
        assert not held_rows.none_of(StopWorkOrder.permit_id, permit.id)  # not asked about
        assert not held_rows.none_of(FrozenPeriod.permit_id, other.id)  # another permit
        with held_rows.asked(other.id, [Waiver.permit_id]):
            assert held_rows.none_of(Waiver.permit_id, other.id)
            assert not held_rows.none_of(FrozenPeriod.permit_id, permit.id)  # the inner block's permit only
        assert held_rows.none_of(FrozenPeriod.permit_id, permit.id)  # the outer block's answer again
    assert not held_rows.none_of(FrozenPeriod.permit_id, permit.id)


def test_a_row_written_inside_the_block_is_read_by_its_reader(app, make):
    """The answer is for reads: once the request writes (a flush), or while a row of a table waits to be
    written, the table's reader asks again, so a page that writes and then shows never hides what it wrote."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    db.session.flush()
    with held_rows.asked(permit.id, [Waiver.permit_id, FrozenPeriod.permit_id]):
        assert waivers_of(permit) == [] and held_rows.none_of(FrozenPeriod.permit_id, permit.id)
        pending = Waiver(permit_id=permit.id, requirement="pre_bury", reason="Seen on site",
                         granted_on=dt.date(2026, 5, 1), granted_by_id=inspector.id)
        db.session.add(pending)  # not flushed: the reader's own query flushes it
        assert waivers_of(permit) == [pending]
        # That flush wrote: no answer of the block is used any more, for any table.
        assert not held_rows.none_of(FrozenPeriod.permit_id, permit.id)
    with held_rows.asked(permit.id, [FrozenPeriod.permit_id]):
        db.session.add(FrozenPeriod(permit_id=permit.id, suspended=True, note="Ground frozen",
                                    starts_at=dt.datetime(2026, 1, 5, 12, tzinfo=dt.UTC), recorded_by_id=inspector.id))
        db.session.flush()
        assert [p.suspended for p in periods_of(permit)] == [True]
