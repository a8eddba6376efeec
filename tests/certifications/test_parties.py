"""Change of ownership or of financial responsibility (§380-14 F): recorded, notified, bound, history kept."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.audit.models import AuditEntry
from inspect_app.certifications.models import ResponsibleParty
from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail
from tests.certifications.om_helpers import local_today


def _party(browser, permit, **fields):
    data = {"party-role": "owner", "party-name": "", "party-email": "", "party-address": "",
            "party-starts_on": local_today().isoformat(), "party-user_id": "", "party-replaces_current": "y"}
    data.update({f"party-{k}": v for k, v in fields.items()})
    return browser.post(f"/permits/{permit.id}/om/parties", data)


def _parties(permit):
    return db.session.scalars(select(ResponsibleParty).where(ResponsibleParty.permit_id == permit.id)
                              .order_by(ResponsibleParty.starts_on)).all()


def test_change_of_ownership_keeps_history_and_binds_the_new_owner(make, signed_in, owner, agent, completed_permit):
    """§380-14 F(1): a change in ownership is recorded; the new party is told and bound, the history kept.
    §380-14 A(3): the O&M plan "shall be binding on all subsequent owners": the buyer is told so and takes
    the permit's O&M pages over from the seller."""
    permit = completed_permit(owner, bound=False)  # the test records the parties
    buyer = make.user("permittee", name="Quinn Buyer", email="quinn@example.org")
    browser = signed_in(agent)
    start = permit.completed_on
    assert _party(browser, permit, name="Pat Owner", email=owner.email, user_id=owner.id,
                  starts_on=start.isoformat()).status_code == 303
    assert _party(browser, permit, role="financial", name="Pat Owner", email=owner.email,
                  starts_on=start.isoformat()).status_code == 303

    sold = local_today() - dt.timedelta(days=1)
    response = _party(browser, permit, name="Quinn Buyer", email="quinn@example.org", address="9 Elm St",
                      user_id=buyer.id, starts_on=sold.isoformat(), make_permit_owner="y")
    assert response.status_code == 303

    parties = _parties(permit)  # the owner and the financial party start the same day: told apart by role
    (financial,) = [party for party in parties if party.role == "financial"]
    old_owner, new_owner = [party for party in parties if party.role == "owner"]
    assert (old_owner.name, old_owner.role, old_owner.ends_on) == ("Pat Owner", "owner", sold)
    assert (financial.role, financial.ends_on) == ("financial", None)  # another role: untouched
    assert (new_owner.name, new_owner.starts_on, new_owner.ends_on, new_owner.user_id) == (
        "Quinn Buyer", sold, None, buyer.id)
    db.session.refresh(permit)
    assert (permit.owner_id, permit.owner_name) == (buyer.id, "Quinn Buyer")
    assert db.session.scalar(select(AuditEntry).where(AuditEntry.action == "permit.update",
                                                      AuditEntry.entity_id == permit.id)).actor_id == agent.id

    [notice] = [m for m in db.session.scalars(select(OutboundEmail)) if "quinn@example.org" in m.to]
    assert "binding on all subsequent owners" in notice.body and permit.number in notice.subject
    assert owner.email in notice.to  # the owner it replaces hears of it too

    page = browser.get(f"/permits/{permit.id}/om").text
    assert "Quinn Buyer" in page and "Pat Owner" in page and f"{sold:%b %-d, %Y}" in page

    # The new owner now has the permit; the old one no longer sees it.
    assert permit.number in signed_in(buyer).get("/my-permits").text
    assert signed_in(owner).get(f"/permits/{permit.id}/om").status_code == 404


def test_each_party_is_told_what_the_plan_asks_of_it(make, signed_in, owner, agent, completed_permit):
    """§380-14 C(2)(j), (l): following the schedule, keeping the log and the annual certification are the duties of
    "the person(s) responsible for operation and maintenance". An easement grantor or the party financing repairs
    was mailed the same duties; each is now told its own part of the plan."""
    permit = completed_permit(owner, bound=False)
    browser = signed_in(agent)
    start = permit.completed_on.isoformat()
    for role, email in (("owner", "own@example.org"), ("operational", "ops@example.org"),
                        ("financial", "fund@example.org"), ("easement_grantor", "grant@example.org")):
        assert _party(browser, permit, role=role, name=f"The {role} party", email=email, address="9 Elm St",
                      starts_on=start).status_code == 303

    def told(email: str) -> str:
        [mail] = [m for m in db.session.scalars(select(OutboundEmail)) if email in m.to]
        return mail.body

    for email in ("own@example.org", "ops@example.org"):
        assert "keep the maintenance log" in told(email) and "submit the annual certification" in told(email)
    assert "responsible for financing its maintenance and emergency repairs" in told("fund@example.org")
    assert "stormwater management easement you granted, with its purpose and location (§380-14 C(2)(d), D(2))" \
        in told("grant@example.org")
    for email in ("fund@example.org", "grant@example.org"):
        assert "annual certification" not in told(email) and "maintenance log" not in told(email)


def test_a_bad_change_is_refused_beside_the_field(make, signed_in, owner, agent, completed_permit):
    permit = completed_permit(owner, bound=False)  # the test records the parties
    browser = signed_in(agent)
    response = _party(browser, permit, name="No Account LLC", make_permit_owner="y")
    assert response.status_code == 422
    assert 'id="party-make_permit_owner-error"' in response.text
    missing = _party(browser, permit, name="")
    assert missing.status_code == 422 and 'id="party-name-error"' in missing.text
    assert _parties(permit) == []


def test_a_permittee_cannot_change_the_plan(make, signed_in, owner, completed_permit):
    permit = completed_permit(owner, bound=False)  # the test records the parties
    browser = signed_in(owner)
    assert _party(browser, permit, name="Me Instead").status_code == 403
    assert browser.post(f"/permits/{permit.id}/om/plan", {"plan-registry_reference": "none"}).status_code == 403
    assert _parties(permit) == []
    page = browser.get(f"/permits/{permit.id}/om")
    assert page.status_code == 200 and "Record a change of ownership" not in page.text


def test_agent_records_the_plan_and_the_schedule(make, signed_in, owner, agent, completed_permit):
    permit = completed_permit(owner, bound=False)  # the test records the parties
    basin = next(s for s in permit.structures if s.name == "Basin B-1")
    browser = signed_in(agent)
    assert browser.post(f"/permits/{permit.id}/om/plan", {
        "plan-estimated_annual_budget": "2500",
        "plan-registry_reference": "Book 123, Page 45", "plan-recorded_on": permit.completed_on.isoformat(),
    }).status_code == 303
    half = browser.post(f"/permits/{permit.id}/om/structures/{basin.id}",
                        {f"s-{basin.id}-maintenance_task": "Mow", f"s-{basin.id}-maintenance_interval_months": ""})
    assert half.status_code == 422 and "Give both the task" in half.text
    assert browser.post(f"/permits/{permit.id}/om/structures/{basin.id}", {
        f"s-{basin.id}-maintenance_task": "Mow the side slopes", f"s-{basin.id}-maintenance_interval_months": "3",
    }).status_code == 303
    db.session.refresh(basin)
    assert (basin.maintenance_task, basin.maintenance_interval_months) == ("Mow the side slopes", 3)
    page = signed_in(owner).get(f"/permits/{permit.id}/om").text
    assert "Book 123, Page 45" in page and "$2,500.00" in page and "Mow the side slopes" in page
