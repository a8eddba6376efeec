"""Constraints the database itself keeps, whatever code writes to it."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy.exc import IntegrityError, StatementError

from inspect_app.audit.models import AppendOnlyError, AuditEntry
from inspect_app.extensions import db
from inspect_app.permits.models import Permit
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import utcnow


def _permit(make, **fields) -> Permit:
    town = make.town()
    values = dict(jurisdiction_id=town.id, number="C-1", site_address="1 Main St", latitude=42.0,
                  longitude=-72.5, owner_name="O", applicant_name="A", disturbed_acres=Decimal("1"),
                  cgp_schedule="every_7_days", issued_on=dt.date(2026, 1, 5))
    values.update(fields)
    return Permit(**values)


def test_permit_numbers_are_unique_within_a_town(app, make):
    db.session.add(_permit(make))
    db.session.commit()
    db.session.add(_permit(make))
    with pytest.raises(IntegrityError):
        db.session.commit()
    db.session.rollback()


def test_same_permit_number_is_allowed_in_another_town(app, make):
    db.session.add(_permit(make))
    db.session.add(_permit(make, jurisdiction_id=make.town("southborough").id))
    db.session.commit()


@pytest.mark.parametrize("field,value", [("latitude", 91.0), ("longitude", -181.0),
                                         ("disturbed_acres", Decimal("-0.5"))])
def test_out_of_range_values_are_refused_by_the_database(app, make, field, value):
    db.session.add(_permit(make, **{field: value}))
    with pytest.raises(IntegrityError):
        db.session.commit()
    db.session.rollback()


def test_unknown_status_is_refused(app, make):
    db.session.add(_permit(make, status="paused"))
    with pytest.raises((StatementError, LookupError)):
        db.session.commit()
    db.session.rollback()


def test_foreign_keys_are_enforced(app, make):
    db.session.add(DisturbedArea(permit_id="no-such-permit", name="A", acres=Decimal("1")))
    with pytest.raises(IntegrityError):
        db.session.commit()
    db.session.rollback()


def test_naive_datetimes_are_refused(app, make):
    permit = _permit(make)
    db.session.add(permit)
    db.session.commit()
    db.session.add(DisturbedArea(permit_id=permit.id, name="A", acres=Decimal("1"),
                                 status_since=dt.datetime(2026, 1, 1, 12)))
    with pytest.raises(StatementError, match="naive datetime"):
        db.session.commit()
    db.session.rollback()


def test_times_come_back_aware_utc(app, make):
    permit = make.permit(areas=["Pad"])
    db.session.expire_all()
    since = db.session.get(Permit, permit.id).areas[0].status_since
    assert since.tzinfo is not None and since.utcoffset() == dt.timedelta(0)
    assert abs(since - utcnow()) < dt.timedelta(minutes=1)


def test_audit_log_is_append_only(app, make):
    make.permit()
    entry = db.session.scalars(db.select(AuditEntry)).first()
    assert entry.action == "permit.create" and entry.after["number"].startswith("TEST-")
    entry.action = "rewritten"
    with pytest.raises(AppendOnlyError):
        db.session.commit()
    db.session.rollback()
    db.session.delete(db.session.get(AuditEntry, entry.seq))
    with pytest.raises(AppendOnlyError):
        db.session.commit()
    db.session.rollback()
