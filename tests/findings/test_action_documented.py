"""CGP 2022 Part 5.4: a corrective action is documented within 24 hours of discovering the condition. One
documented late is "met late" on the permit's record, not gone from it."""
from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.schedule.models import PermitObligation
from inspect_app.types import utcnow


def test_a_corrective_action_documented_late_shows_met_late(make, signed_in):
    engineer = make.user("inspector")
    permit = make.permit(inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    found_at = utcnow() - dt.timedelta(days=2)
    report = make.inspection(permit, evaluation="violations", performed_at=found_at, inspector=engineer)
    finding = make.finding(permit, report, description="Silt fence down along the brook")
    (owed,) = db.session.scalars(select(PermitObligation).where(PermitObligation.kind == "corrective_action_record"))
    assert owed.due_at == found_at + dt.timedelta(hours=24) and owed.due_at < utcnow()  # overdue

    browser = signed_in(engineer)
    response = browser.post(f"/findings/{finding.id}/actions", {
        f"action-{finding.id}-kind": "significant_repair", f"action-{finding.id}-description": "Reset the fence",
        f"action-{finding.id}-owner_name": "Site contractor"})
    assert response.status_code in (200, 303)
    db.session.expire_all()
    assert db.session.scalars(select(PermitObligation).where(PermitObligation.kind == "corrective_action_record")).all() == []
    timeline = signed_in(make.user("agent")).get(f"/permits/{permit.id}/timeline").text
    row = next(line for line in timeline.split("<tr>") if "Corrective action documented" in line)
    assert "Met" in row and re.search(r"met 2[34] hours late", row) and "CGP 2022 Part 5.4" in row
