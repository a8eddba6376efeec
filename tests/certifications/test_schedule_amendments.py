"""§380-14 F(2): a change to the maintenance schedule is in force only once all responsible parties signed it."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.audit.models import AuditEntry
from inspect_app.certifications.models import ResponsibleParty, ScheduleAmendment
from inspect_app.extensions import db


def test_380_14_F2_schedule_change_waits_for_every_responsible_party(make, signed_in, owner, agent, completed_permit):
    """§380-14 F(2): "Amendments must be in writing and signed by all responsible parties"."""
    permit = completed_permit(owner, bound=False)  # the test records the parties
    basin = next(s for s in permit.structures if s.name == "Basin B-1")
    before = (basin.maintenance_task, basin.maintenance_interval_months)
    db.session.add_all([
        ResponsibleParty(permit_id=permit.id, user_id=owner.id, name=owner.name, role="owner", starts_on=permit.completed_on),
        ResponsibleParty(permit_id=permit.id, name="Bank Trust", role="financial",
                         starts_on=permit.completed_on),
        ResponsibleParty(permit_id=permit.id, name="Mow Co", role="operational", starts_on=permit.completed_on),
    ])
    db.session.commit()
    parties = {p.name: p for p in db.session.scalars(select(ResponsibleParty).where(ResponsibleParty.permit_id == permit.id))}


    assert signed_in(agent).post(f"/permits/{permit.id}/om/structures/{basin.id}", {
        f"s-{basin.id}-maintenance_task": "Mow the side slopes", f"s-{basin.id}-maintenance_interval_months": "3",
    }).status_code == 303
    db.session.refresh(basin)
    assert (basin.maintenance_task, basin.maintenance_interval_months) == before  # pending, not in force
    [amendment] = db.session.scalars(select(ScheduleAmendment)).all()
    page = signed_in(agent).get(f"/permits/{permit.id}/om").text
    assert "Amendments awaiting signatures (§380-14 F(2))" in page and "Mow the side slopes" in page

    sign = f"/permits/{permit.id}/om/amendments/{amendment.id}/sign"
    # The owner cannot sign for the financially responsible party.
    refused = signed_in(owner).post(sign, {"party_id": parties["Bank Trust"].id})
    assert refused.status_code == 422 and "Only the party itself" in refused.text
    assert signed_in(owner).post(sign, {"party_id": parties[owner.name].id}).status_code == 303
    again = signed_in(owner).post(sign, {"party_id": parties[owner.name].id})
    assert again.status_code == 422 and "still has to sign" in again.text
    # Parties with no account sign in writing and the agent records it; the last one puts the change in force.
    assert signed_in(agent).post(sign, {"party_id": parties["Bank Trust"].id}).status_code == 303
    db.session.refresh(basin)
    assert (basin.maintenance_task, basin.maintenance_interval_months) == before  # Mow Co has not signed
    assert signed_in(agent).post(sign, {"party_id": parties["Mow Co"].id}).status_code == 303
    db.session.refresh(basin)
    db.session.refresh(amendment)
    assert (basin.maintenance_task, basin.maintenance_interval_months) == ("Mow the side slopes", 3)
    assert amendment.in_force_at is not None and len(amendment.signatures) == 3
    assert db.session.scalar(select(AuditEntry).where(AuditEntry.action == "schedule_amendment.in_force")) is not None
    assert "Amendments awaiting signatures" not in signed_in(agent).get(f"/permits/{permit.id}/om").text
    assert signed_in(agent).post(sign, {"party_id": parties["Mow Co"].id}).status_code == 422  # in force: nothing to sign


def _propose(browser, permit, basin, task: str = "Mow the side slopes", months: str = "3"):
    return browser.post(f"/permits/{permit.id}/om/structures/{basin.id}", {
        f"s-{basin.id}-maintenance_task": task, f"s-{basin.id}-maintenance_interval_months": months})


def _add_party(browser, permit, role: str, name: str):
    return browser.post(f"/permits/{permit.id}/om/parties", {
        "party-role": role, "party-name": name, "party-email": "", "party-address": "",
        "party-starts_on": permit.completed_on.isoformat(), "party-user_id": "", "party-replaces_current": ""})


def test_380_14_F2_an_easement_grantor_must_sign_a_longmeadow_amendment_too(signed_in, owner, agent, completed_permit):
    """§380-14 F(2): "Responsible parties shall include owner(s), persons with financial responsibility, and
    persons with operational responsibility, and easement grantors"."""
    permit = completed_permit(owner, bound=False)  # the test records the parties
    basin = next(s for s in permit.structures if s.name == "Basin B-1")
    browser = signed_in(agent)
    assert _add_party(browser, permit, "owner", "Owner LLC").status_code == 303
    assert _add_party(browser, permit, "easement_grantor", "Abutter Realty Trust").status_code == 303
    page = browser.get(f"/permits/{permit.id}/om").text
    assert "<td>Easement grantor</td><td>Abutter Realty Trust</td>" in page
    assert _propose(browser, permit, basin).status_code == 303
    [amendment] = db.session.scalars(select(ScheduleAmendment)).all()
    parties = {p.name: p for p in db.session.scalars(select(ResponsibleParty))}
    sign = f"/permits/{permit.id}/om/amendments/{amendment.id}/sign"
    assert browser.post(sign, {"party_id": parties["Owner LLC"].id}).status_code == 303
    db.session.refresh(basin)
    assert basin.maintenance_task == "Inspect the basin outlet"  # the grantor has not signed: not in force
    assert browser.post(sign, {"party_id": parties["Abutter Realty Trust"].id}).status_code == 303
    db.session.refresh(basin)
    assert (basin.maintenance_task, basin.maintenance_interval_months) == ("Mow the side slopes", 3)


def test_southborough_amendment_is_signed_by_owner_financial_and_operational_parties_only(
        signed_in, owner, make, completed_permit):
    """§7.6, Changes to O&M Plans b): "Responsible Parties shall include owner(s), persons with financial
    responsibility, and persons with operational responsibility" — easement grantors are not named."""
    permit = completed_permit(owner, town="southborough", bound=False)  # the test records the parties
    agent = make.user("agent", town="southborough")
    basin = next(s for s in permit.structures if s.name == "Basin B-1")
    browser = signed_in(agent)
    assert _add_party(browser, permit, "owner", "Owner LLC").status_code == 303
    assert _add_party(browser, permit, "easement_grantor", "Abutter Realty Trust").status_code == 303
    assert _propose(browser, permit, basin).status_code == 303
    [amendment] = db.session.scalars(select(ScheduleAmendment)).all()
    grantor = db.session.scalar(select(ResponsibleParty).where(ResponsibleParty.role == "easement_grantor"))
    owner_party = db.session.scalar(select(ResponsibleParty).where(ResponsibleParty.role == "owner"))
    sign = f"/permits/{permit.id}/om/amendments/{amendment.id}/sign"
    refused = browser.post(sign, {"party_id": grantor.id})
    assert refused.status_code == 422
    assert browser.post(sign, {"party_id": owner_party.id}).status_code == 303
    db.session.refresh(basin)
    assert (basin.maintenance_task, basin.maintenance_interval_months) == ("Mow the side slopes", 3)
