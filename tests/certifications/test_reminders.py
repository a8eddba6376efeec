"""`flask om remind`: 30 days before a certification is due and once it is late, never twice."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import func, select

from inspect_app.certifications.models import OMCertification, ResponsibleParty
from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail
from inspect_app.rules.calendar import add_months
from tests.certifications.om_helpers import local_today


def _remind(runner, *args):
    result = runner.invoke(args=["om", "remind", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_reminders_go_once_each(app, make, runner, smtp_server, completed_permit):
    today = local_today()
    soon_owner, late_owner = make.user("permittee"), make.user("permittee")
    # Due 30 days (the profile's certify_within_days) after each first year ends.
    soon = completed_permit(soon_owner, add_months(today - dt.timedelta(days=10), -12))
    late = completed_permit(late_owner, add_months(today - dt.timedelta(days=35), -12))
    completed_permit(make.user("permittee"), add_months(today + dt.timedelta(days=100), -12))  # not yet
    certified = completed_permit(make.user("permittee"), add_months(today - dt.timedelta(days=35), -12))
    db.session.add(OMCertification(permit_id=certified.id, period_start=certified.completed_on,
                                   period_end=add_months(certified.completed_on, 12) - dt.timedelta(days=1),
                                   signer_name="Someone", statement="I certify."))
    make.permit(owner=make.user("permittee"), construction_started_on=today)  # active: no O&M yet
    db.session.add(ResponsibleParty(permit_id=soon.id, name="Ops Co", role="operational", email="ops@example.org",
                                    starts_on=soon.completed_on))
    db.session.commit()

    first = _remind(runner)
    assert "2 reminder(s) sent" in first
    assert _remind(runner).endswith("0 reminder(s) sent\n")
    assert db.session.scalar(select(func.count()).select_from(OutboundEmail)) == 2

    by_subject = {m["Subject"]: m for m in smtp_server}
    assert len(smtp_server) == 2
    soon_due = add_months(soon.completed_on, 12) + dt.timedelta(days=30)
    upcoming = by_subject[f"O&M certification due {soon_due:%b %-d, %Y}: permit {soon.number}"]
    assert set(upcoming["To"].split(", ")) == {"ops@example.org", soon_owner.email}
    late_due = add_months(late.completed_on, 12) + dt.timedelta(days=30)
    overdue = by_subject[f"O&M certification late {late_due:%b %-d, %Y}: permit {late.number}"]
    assert overdue["To"] == late_owner.email

    # The day after the first permit's due date it is late: one more reminder, for it alone.
    assert "1 reminder(s) sent" in _remind(runner, "--on", (soon_due + dt.timedelta(days=1)).isoformat())
    assert "0 reminder(s) sent" in _remind(runner, "--on", (soon_due + dt.timedelta(days=2)).isoformat())
    assert len(smtp_server) == 3
    assert smtp_server[-1]["Subject"].startswith("O&M certification late")
    assert soon.number in smtp_server[-1]["Subject"]


def test_a_bad_date_is_refused_with_a_message(runner):
    result = runner.invoke(args=["om", "remind", "--on", "yesterday"])
    assert result.exit_code != 0
    assert "'yesterday' does not match the format '%Y-%m-%d'" in result.output
