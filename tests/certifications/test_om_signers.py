"""Who signs the annual O&M certification, and who is reminded of it. Longmeadow §380-14 C(2)(l): "Agreement that
person(s) responsible for operation and maintenance, shall submit annual certification documenting the work that
has been done over the last 12 months". §380-14 A(3): "The O&M plan shall be binding on all subsequent owners".
A seller whose sale the town recorded signed a year of a system they no longer owned; an easement grantor, told the
plan asks no certification of it, was reminded each year to submit one."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from inspect_app.certifications import services as om
from inspect_app.certifications.models import OMCertification
from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail


@pytest.fixture
def completed(completed_permit, owner, agent):
    """A Longmeadow permit completed 12 months and 10 days ago (its first year is over), owned by Pat."""
    return {"permit": completed_permit(owner), "pat": owner, "agent": agent}


def _sign(browser, permit):
    return browser.post(f"/permits/{permit.id}/om/certify", {"cert-agree": "y", "cert-without_entries": "y"})


def test_a_seller_no_longer_bound_to_the_plan_cannot_certify_the_year(completed, signed_in):
    permit, pat, agent = completed["permit"], completed["pat"], completed["agent"]
    # The DPW records the sale, four months into the first year, to a buyer with no account yet; and its operator.
    sold = permit.completed_on + dt.timedelta(days=120)
    om.change_responsible_party(agent, permit, role="owner", name="Harbor Holdings LLC", email="harbor@example.org",
                                address="1 Harbor Way", starts_on=sold)
    om.change_responsible_party(agent, permit, role="operational", name="Harbor Site Services",
                                email="ops@harbor.example.org", address="1 Harbor Way", starts_on=sold)
    db.session.commit()
    assert pat.name not in [p.name for p in om.current_parties(permit)]

    response = _sign(signed_in(pat), permit)
    # Pat is not a person responsible for operation and maintenance of the year certified: refused, and told who is.
    assert response.status_code == 422
    said = " ".join(response.text.split()).replace("&#39;", "'")
    assert "You are not among those bound to the plan's operation and maintenance now (" in said
    assert "Harbor Holdings LLC (owner)" in said and "Harbor Site Services (operationally responsible)" in said
    assert db.session.scalars(select(OMCertification)).all() == []


def test_the_certification_reminder_goes_to_those_who_certify_not_to_an_easement_grantor(completed):
    """The app tells an easement grantor the plan asks no certification of it (`_notify_binding`); the reminder
    goes to the owner who signs, not to the grantor."""
    permit, agent = completed["permit"], completed["agent"]
    om.change_responsible_party(agent, permit, role="easement_grantor", name="Neighbour Trust",
                                email="grantor@example.org", address="3 Elm St", starts_on=permit.completed_on)
    db.session.commit()
    [told] = [m.body for m in db.session.scalars(select(OutboundEmail)) if "grantor@example.org" in m.to]
    assert "annual certification" not in told

    [reminder] = om.send_reminders()
    mail = db.session.get(OutboundEmail, reminder.email_id)
    assert "grantor@example.org" not in mail.to and mail.to == [completed["pat"].email]
