"""A permittee's home: their permits with reports, stop-work orders, actions assigned to them, and deadlines."""
from __future__ import annotations

import datetime as dt
import re
from html import unescape

from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.rules.calendar import add_months
from inspect_app.types import utcnow


def test_home_shows_what_the_permittee_must_do(make, signed_in, owner, agent, completed_permit):
    permit = make.permit(owner=owner, construction_started_on=dt.date(2026, 6, 2))
    done = completed_permit(owner)
    inspection = Inspection(permit_id=permit.id, type="erosion_control", status="submitted", performed_at=utcnow(),
                            inspector_name="Ivy Inspector", inspector_credentials="CPESC", evaluation="violations")
    draft = Inspection(permit_id=permit.id, type="pre_bury", status="draft", performed_at=utcnow(),
                       inspector_name="Draft Person", inspector_credentials="CPESC")
    db.session.add_all([inspection, draft])
    db.session.flush()
    finding = Finding(inspection_id=inspection.id, permit_id=permit.id, description="Silt fence down")
    db.session.add(finding)
    db.session.flush()
    mine = CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="routine_maintenance",
                            description="Re-stake the silt fence", owner_id=owner.id, owner_name=owner.name,
                            discovered_at=utcnow() - dt.timedelta(days=3), due_at=utcnow() - dt.timedelta(days=2))
    theirs = CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="significant_repair",
                              description="Contractor's own repair", owner_id=None, owner_name="Contractor",
                              discovered_at=utcnow(), due_at=utcnow() + dt.timedelta(days=7))
    order = StopWorkOrder(permit_id=permit.id, reason="Sediment leaving the site", issued_by_id=agent.id)
    db.session.add_all([mine, theirs, order])
    db.session.commit()

    page = signed_in(owner).get("/my-permits")
    assert page.status_code == 200
    text = page.text
    assert permit.number in text and done.number in text
    assert "Re-stake the silt fence" in text and "Overdue since" in text
    assert "Contractor&#39;s own repair" not in text and "Contractor's own repair" not in text
    assert "Sediment leaving the site" in text and "In effect" in text
    assert "Ivy Inspector" in text and "Draft Person" not in text
    due = add_months(done.completed_on, 12) + dt.timedelta(days=30)  # the profile's certify_within_days
    assert f"due {due:%b %-d, %Y}" in text

    detail = signed_in(owner).get(f"/permits/{permit.id}").text
    assert 'href="/my-permits"' in detail


def test_log_entry_page_has_the_photo_picker_and_certify_page_the_signature_pad(make, signed_in, owner, completed_permit):
    permit = completed_permit(owner)
    browser = signed_in(owner)
    created = browser.post(f"/permits/{permit.id}/om/log", {
        "log-kind": "repair", "log-performed_on": permit.completed_on.isoformat(),
        "log-description": "Replaced the outlet grate", "log-performed_by": "Pat Owner"})
    assert created.status_code == 303
    entry_page = browser.get(created.headers["Location"]).text
    assert 'class="photo-picker"' in entry_page and 'capture="environment"' in entry_page
    certify_page = browser.get(f"/permits/{permit.id}/om/certify").text
    assert "data-signature-pad" in certify_page and "Replaced the outlet grate" in certify_page


def _deadlines(page: str, permit) -> str:
    """The words of one permit's Deadlines list on the home page."""
    card = page.split(f'id="permit-{permit.id}"', 1)[1].split("<h3>Stop-work orders</h3>", 1)[0]
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", card)).split())


def test_nothing_due_only_when_nothing_is_due(make, signed_in, owner):
    # Construction started 12 weeks ago and no inspection since: a dozen weekly inspections owed (CGP 2022 Part 4.2).
    today = utcnow().date()
    late = make.permit(owner=owner, construction_started_on=today - dt.timedelta(weeks=12),
                       issued_on=today - dt.timedelta(weeks=20))
    # Completed two months ago with no structure to maintain: its first O&M certification is months away.
    calm = make.permit(owner=owner, construction_started_on=today - dt.timedelta(days=300),
                       issued_on=today - dt.timedelta(days=400))
    calm.status, calm.completed_on = "completed", today - dt.timedelta(days=60)
    db.session.commit()
    page = signed_in(owner).get("/my-permits").text

    owed = _deadlines(page, late)
    assert "Nothing due" not in owed
    assert "Overdue Erosion-control inspection: Whole site, overdue since" in owed
    assert re.search(r"\(and 1[01] more like it\) CGP 2022 Part 4\.2", owed), owed
    assert "Nothing due." in _deadlines(page, calm)
