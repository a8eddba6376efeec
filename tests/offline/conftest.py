"""The site most offline tests inspect, and an open corrective action on it."""
from __future__ import annotations

import datetime as dt

import pytest

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction
from inspect_app.permits import services as permits
from inspect_app.types import utcnow


@pytest.fixture
def site(make):
    """An inspector assigned to a permit with a disturbed area and a BMP (a silt fence)."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"])
    permits.add_structure(None, permit, name="Silt fence, north edge", kind="bmp", is_underground=False)
    db.session.commit()
    return inspector, permit


@pytest.fixture
def open_action(site, make):
    """A submitted report of the site with a finding and its open corrective action."""
    inspector, permit = site
    found = utcnow() - dt.timedelta(hours=3)  # the action's clock runs from the inspection that found it
    report = make.inspection(permit, evaluation="violations", inspector=inspector, latitude=42.05, longitude=-72.58,
                             performed_at=found)
    finding = make.finding(permit, report)
    action = CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="routine_maintenance",
                              description="Reset the silt fence", owner_name="Site contractor",
                              discovered_at=found, due_at=utcnow() + dt.timedelta(days=1))
    db.session.add(action)
    db.session.commit()
    return action
