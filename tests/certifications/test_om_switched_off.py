"""Southborough's yearly O&M certification is the Commission's policy with a switch (`[om_certification] enabled`,
profile comment: "§7.6 d)(6) asks for log sheets, not a yearly certification: the Commission's policy, with its
switch"). Switched off, the schedule owes nothing (rules.engine._om_certification), and no reminder says one is
due or late (the reminder job mailed the owner that a certification "is late").

Southborough §7.6 d)(6): "An Inspection and Maintenance Schedule log sheet shall be created ... The log sheets shall be
maintained and filled out whenever inspection or maintenance is performed, and the log sheets shall be made available
for inspection upon request" (no annual certification in the text).
"""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.certifications import services as om
from inspect_app.permits.models import Permit
from inspect_app.rules import obligations
from inspect_app.rules.calendar import add_months
from inspect_app.schedule.facts import load_records
from inspect_app.types import utcnow
from tests.certifications.om_helpers import local_today


def test_no_certification_reminder_where_the_commission_switched_its_policy_off(app, completed_permit, owner,
                                                                                monkeypatch):
    profile = app.extensions["profiles"]["southborough"]
    off = profile.model_copy(update={"om_certification": profile.om_certification.model_copy(
        update={"enabled": False})})
    monkeypatch.setitem(app.extensions["profiles"], "southborough", off)

    completed_on = add_months(local_today(), -12) - dt.timedelta(days=45)  # a year and 45 days ago
    permit = completed_permit(owner, completed_on, town="southborough")

    (record,) = load_records(select(Permit).where(Permit.id == permit.id))
    assert not [o for o in obligations(record.facts, off, utcnow()) if o.kind == "om_certification"]

    assert om.send_reminders() == []  # nothing is owed, so nothing is "late"
