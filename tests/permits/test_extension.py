"""Southborough §9.7: an agent records the extension applied for and granted; the lapse moves a year."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from inspect_app.schedule.models import PermitObligation
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.types import LOCAL_TZ


def _form(permit: Permit, **changes) -> dict:
    data = {"jurisdiction_id": permit.jurisdiction_id, "number": permit.number, "site_address": permit.site_address,
            "latitude": str(permit.latitude), "longitude": str(permit.longitude), "owner_id": "",
            "owner_name": permit.owner_name, "applicant_name": permit.applicant_name,
            "applicant_email": permit.applicant_email, "disturbed_acres": str(permit.disturbed_acres),
            "is_redevelopment": "0", "cgp_schedule": permit.cgp_schedule, "surety_amount": "",
            "issued_on": permit.issued_on.isoformat(), "construction_started_on": "",
            "extension_requested_on": "", "extension_granted_on": ""}
    return data | changes


def _lapse(permit_id: str) -> dt.datetime | None:
    """When the dashboard's stored obligations say the permit lapses."""
    db.session.expire_all()
    return db.session.scalar(select(PermitObligation.due_at).where(PermitObligation.permit_id == permit_id,
                                                                   PermitObligation.kind == "lapse"))


def test_a_granted_extension_moves_the_lapse_a_year(make, signed_in):
    agent = make.user("agent", town="southborough")
    # Issued almost three years ago, no work begun: it lapses in a few weeks.
    # The town's today, not the machine's: granted "today" is in force only once the town's day has begun.
    today = dt.datetime.now(LOCAL_TZ).date()
    issued = today - dt.timedelta(days=3 * 365 - 20)
    permit = make.permit("southborough", issued_on=issued)
    before = _lapse(permit.id)
    assert before is not None
    browser = signed_in(agent)
    requested = today - dt.timedelta(days=40)
    saved = browser.post(f"/permits/{permit.id}/edit", _form(permit, extension_requested_on=requested.isoformat(),
                                                          extension_granted_on=today.isoformat()))
    assert saved.status_code == 303, saved.text
    after = _lapse(permit.id)
    assert after.date() - before.date() in (dt.timedelta(days=365), dt.timedelta(days=366))
    page = browser.get(f"/permits/{permit.id}")
    assert "applied for" in page.text and "granted" in page.text
    timeline = browser.get(f"/permits/{permit.id}/timeline").text
    assert str(after.astimezone().year) in timeline


def test_an_extension_granted_before_it_was_asked_for_is_refused(make, signed_in):
    agent = make.user("agent", town="southborough")
    permit = make.permit("southborough", issued_on=dt.date(2025, 1, 6))
    browser = signed_in(agent)
    refused = browser.post(f"/permits/{permit.id}/edit", _form(permit, extension_granted_on="2026-03-01"))
    assert refused.status_code == 422
    assert "Give the day the extension was applied for first." in refused.text
    refused = browser.post(f"/permits/{permit.id}/edit", _form(permit, extension_requested_on="2026-03-02",
                                                            extension_granted_on="2026-03-01"))
    assert "An extension cannot be granted before it was applied for." in refused.text
    db.session.expire_all()
    stored = db.session.get(Permit, permit.id)
    assert stored.extension_requested_on is None and stored.extension_granted_on is None


def test_an_unused_permit_past_its_lapse_becomes_lapsed_and_stays_so_without_an_extension(make, runner):
    # §9.7: three years from the Town Clerk filing, no work begun.
    filed = dt.date.today() - dt.timedelta(days=3 * 366 + 2)
    lapsed = make.permit("southborough", issued_on=filed - dt.timedelta(days=10), decision_filed_on=filed)
    young = make.permit("southborough", issued_on=dt.date.today() - dt.timedelta(days=3 * 365 - 30))
    # Issued more than three years ago, but filed with the Clerk later: the clock runs from the filing.
    late_filed = make.permit("southborough", issued_on=dt.date.today() - dt.timedelta(days=3 * 366 + 5),
                             decision_filed_on=dt.date.today() - dt.timedelta(days=3 * 365 - 30))
    longmeadow = make.permit("longmeadow", issued_on=dt.date.today() - dt.timedelta(days=5 * 365))
    result = runner.invoke(args=["permits", "lapse"])
    assert result.exit_code == 0, result.output
    assert f"{lapsed.number}: lapsed" in result.output and "1 permit(s) lapsed." in result.output
    db.session.expire_all()
    assert [db.session.get(Permit, p.id).status for p in (lapsed, young, late_filed, longmeadow)] == [
        "lapsed", "issued", "issued", "issued"]
    with pytest.raises(permits.PermitError, match="can become active again only with an extension"):
        permits.change_status(None, db.session.get(Permit, lapsed.id), "active")
    assert db.session.get(Permit, lapsed.id).status == "lapsed"
    assert "0 permit(s) lapsed." in runner.invoke(args=["permits", "lapse"]).output  # once only


def test_an_extension_applied_for_late_does_not_extend_the_permit(make, signed_in):
    """§9.7: "may be granted a one-year extension by applying to the Commission, in writing at least 30 days prior
    to the date when the SMP is due to lapse". An application received five days before the lapse moved the
    lapse a year all the same."""
    agent = make.user("agent", town="southborough")
    today = dt.datetime.now(LOCAL_TZ).date()
    permit = make.permit("southborough", issued_on=today - dt.timedelta(days=3 * 365 - 20))
    lapse = _lapse(permit.id)
    lapse_day = lapse.astimezone(LOCAL_TZ).date()
    browser = signed_in(agent)
    late = (lapse_day - dt.timedelta(days=5)).isoformat()
    refused = browser.post(f"/permits/{permit.id}/edit", _form(permit, extension_requested_on=late,
                                                            extension_granted_on=late))
    assert refused.status_code == 422
    apply_by = lapse_day - dt.timedelta(days=30)
    assert (f"An extension is applied for in writing at least 30 days before the permit lapses on "
            f"{lapse_day:%b %-d, %Y}: by {apply_by:%b %-d, %Y} (§9.7). An application received later does not "
            "extend it.") in refused.text.replace("&#39;", "'")
    assert _lapse(permit.id) == lapse
    stored = db.session.get(Permit, permit.id)
    assert stored.extension_requested_on is None and stored.extension_granted_on is None
    # Applied for on the last day it may be (30 days before), granted on the day of the lapse: the text sets no
    # day for the Commission's decision on a timely application.
    for granted in (lapse_day, today):
        saved = browser.post(f"/permits/{permit.id}/edit", _form(
            permit, extension_requested_on=apply_by.isoformat(), extension_granted_on=granted.isoformat()))
        assert saved.status_code == 303
    assert _lapse(permit.id).date() - lapse.date() in (dt.timedelta(days=365), dt.timedelta(days=366))


def test_longmeadows_director_grants_an_extension_with_no_application_and_its_form_says_no_lapse(make, signed_in):
    """§380-10 K: "The DPW DIRECTOR may grant an extension, at its discretion": no written application, and a
    Longmeadow permit does not lapse (work must begin within two years). Its form said "Extension of a permit that
    lapses" and "The permit then lapses a year later", and refused a grant with no application date."""
    agent = make.user("agent")
    permit = make.permit(issued_on=dt.date(2025, 1, 6))
    browser = signed_in(agent)
    page = browser.get(f"/permits/{permit.id}/edit").text
    assert "Extension of a permit that lapses" not in page and "The permit then lapses" not in page
    granted = browser.post(f"/permits/{permit.id}/edit", _form(permit, extension_granted_on="2026-03-01",
                                                            start_extended_to="2027-09-01"))
    assert granted.status_code == 303, granted.text
    db.session.expire_all()
    stored = db.session.get(Permit, permit.id)
    assert stored.extension_granted_on == dt.date(2026, 3, 1) and stored.start_extended_to == dt.date(2027, 9, 1)
