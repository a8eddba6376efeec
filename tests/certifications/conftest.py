"""Fixtures for the O&M phase: completed permits with an O&M schedule, their owner, an agent."""
from __future__ import annotations

import datetime as dt

import pytest

from inspect_app.certifications.models import ResponsibleParty
from inspect_app.extensions import db
from inspect_app.rules.calendar import add_months
from tests.certifications.om_helpers import local_today


@pytest.fixture
def owner(make):
    return make.user("permittee", name="Pat Owner", email="pat.owner@example.org")


@pytest.fixture
def agent(make):
    return make.user("agent", name="Alex Agent")


@pytest.fixture
def completed_permit(make):
    """`completed_permit(owner, completed_on)`: a completed permit with two scheduled structures, its owner bound
    to the O&M plan as its responsible party (`bound=False`: none recorded yet)."""

    def build(owner, completed_on: dt.date | None = None, bound: bool = True, **fields):
        completed_on = completed_on or add_months(local_today(), -12) - dt.timedelta(days=10)
        permit = make.permit(owner=owner, structures=["Forebay F-1", "Basin B-1"],
                             construction_started_on=completed_on - dt.timedelta(days=200),
                             issued_on=completed_on - dt.timedelta(days=300), **fields)
        forebay, basin = sorted(permit.structures, key=lambda s: s.name, reverse=True)
        forebay.maintenance_task, forebay.maintenance_interval_months = "Remove sediment from the forebay", 12
        basin.maintenance_task, basin.maintenance_interval_months = "Inspect the basin outlet", 6
        permit.status, permit.completed_on = "completed", completed_on
        if bound:  # §380-14 A(3): the plan binds the owner from the certificate of completion
            db.session.add(ResponsibleParty(permit_id=permit.id, user_id=owner.id, name=owner.name, role="owner",
                                            email=owner.email, starts_on=completed_on))
        db.session.commit()
        return permit

    return build
