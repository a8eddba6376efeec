"""Waivers (Longmeadow §380-8, Southborough §6.2): the authority records the waiver of a named requirement
on a permit, with the reason, the day and who granted it; the waived obligation stops, and the waiver is
cited wherever the obligation is shown."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.pages.dashboard.services import timeline
from inspect_app.extensions import db
from inspect_app.permits.models import Permit
from inspect_app.schedule.models import PermitObligation
from inspect_app.types import LOCAL_TZ, utcnow
from inspect_app.waivers.models import Waiver


def _today() -> dt.date:
    return utcnow().astimezone(LOCAL_TZ).date()


def _pre_bury(permit) -> list:
    _, items = timeline(select(Permit).where(Permit.id == permit.id), utcnow())
    return [o for o in items if o.kind == "pre_bury"]


def test_the_dpw_director_waives_one_structures_pre_bury_inspection(make, signed_in):
    """§380-8 A: "The DPW Director may waive strict compliance with any requirement of these rules and
    regulations"; B: the request comes "accompanied by an explanation"."""
    agent = make.user("agent")
    permit = make.permit(structures=["Pipe P-1", "Basin B-1"], construction_started_on=_today() - dt.timedelta(days=5))
    pipe = next(s for s in permit.structures if s.name == "Pipe P-1")
    browser = signed_in(agent)
    no_reason = browser.post(f"/permits/{permit.id}/waivers/", {"waiver-requirement": "pre_bury",
                                                                "waiver-structure_id": pipe.id,
                                                                "waiver-granted_on": _today().isoformat()})
    assert no_reason.status_code == 422 and "Give the reason for the waiver" in no_reason.text
    response = browser.post(f"/permits/{permit.id}/waivers/", {
        "waiver-requirement": "pre_bury", "waiver-structure_id": pipe.id, "waiver-granted_on": _today().isoformat(),
        "waiver-reason": "Pipe laid in an open trench the DPW inspected itself"})
    assert response.status_code == 303
    (waiver,) = db.session.scalars(select(Waiver)).all()
    assert (waiver.requirement, waiver.structure_id, waiver.granted_by_id) == ("pre_bury", pipe.id, agent.id)

    waived, owed = sorted(_pre_bury(permit), key=lambda o: o.status, reverse=True)
    assert waived.status == "waived" and waived.subject == f"structure:{pipe.id}"
    assert waived.citation == "§380-16 C(4)(c); waived under §380-8"
    assert f"by {agent.name}: Pipe laid in an open trench the DPW inspected itself." in waived.reason
    assert owed.status == "due"  # the basin's is still owed
    stored = db.session.scalars(select(PermitObligation.subject).where(PermitObligation.kind == "pre_bury")).all()
    assert stored == [owed.subject]  # the waived one stops
    page = browser.get(f"/permits/{permit.id}/timeline").text
    assert "Waived" in page and "waived under §380-8" in page
    permit_page = browser.get(f"/permits/{permit.id}").text
    assert "<strong>Pre-bury inspection of Pipe P-1</strong>" in permit_page
    assert f"waived (§380-8) on {_today():%b %-d, %Y} by {agent.name}" in permit_page


def test_a_waiver_is_recorded_once(make, signed_in):
    """The same waiver posted twice (a second tap, a second tab) was stored twice: a waiver is a guarded record that
    cannot be deleted, so the copy stayed for good. The second is refused and says when the first was granted; the
    same requirement of another structure is its own waiver."""
    agent = make.user("agent")
    permit = make.permit(structures=["Pipe P-1", "Basin B-1"], construction_started_on=_today() - dt.timedelta(days=5))
    pipe, basin = (next(s for s in permit.structures if s.name == name) for name in ("Pipe P-1", "Basin B-1"))
    browser = signed_in(agent)
    form = {"waiver-requirement": "pre_bury", "waiver-structure_id": pipe.id, "waiver-granted_on": _today().isoformat(),
            "waiver-reason": "Pipe laid in an open trench the DPW inspected itself"}
    assert browser.post(f"/permits/{permit.id}/waivers/", form).status_code == 303
    again = browser.post(f"/permits/{permit.id}/waivers/", form)
    assert again.status_code == 422
    assert f"already waived on this permit, on {_today():%b %-d, %Y}" in again.text
    assert browser.post(f"/permits/{permit.id}/waivers/", {**form, "waiver-structure_id": basin.id}).status_code == 303
    assert sorted(w.structure_id for w in db.session.scalars(select(Waiver))) == sorted([pipe.id, basin.id])


def test_a_federal_duty_cannot_be_waived_and_only_the_towns_authority_waives(make, signed_in):
    agent = make.user("agent")
    permit = make.permit(construction_started_on=_today() - dt.timedelta(days=5))
    browser = signed_in(agent)
    federal = browser.post(f"/permits/{permit.id}/waivers/", {"waiver-requirement": "inspection",
                                                              "waiver-reason": "Too many",
                                                              "waiver-granted_on": _today().isoformat()})
    assert federal.status_code == 422 and "Not a valid choice" in federal.text
    future = browser.post(f"/permits/{permit.id}/waivers/", {"waiver-requirement": "walk_through",
                                                             "waiver-reason": "Small site",
                                                             "waiver-granted_on": (_today() + dt.timedelta(days=1)).isoformat()})
    assert future.status_code == 422 and "today or earlier" in future.text
    data = {"waiver-requirement": "walk_through", "waiver-reason": "Small site", "waiver-granted_on": _today().isoformat()}
    # (One browser: each signs in before posting.)
    assert signed_in(make.user("inspector")).post(f"/permits/{permit.id}/waivers/", data).status_code in (403, 404)
    other_town = signed_in(make.user("agent", town="southborough"))
    assert other_town.post(f"/permits/{permit.id}/waivers/", data).status_code == 404
    assert db.session.scalars(select(Waiver)).all() == []


def test_southboroughs_waiver_cites_its_own_section(make, signed_in):
    """Southborough §6.2: "Strict compliance with these Regulations may be waived if the Commission finds ..."."""
    agent = make.user("agent", town="southborough")
    permit = make.permit("southborough", construction_started_on=_today() - dt.timedelta(days=5))
    response = signed_in(agent).post(f"/permits/{permit.id}/waivers/", {
        "waiver-requirement": "walk_through", "waiver-reason": "Single lot, punch list settled at the final",
        "waiver-granted_on": _today().isoformat()})
    assert response.status_code == 303
    _, items = timeline(select(Permit).where(Permit.id == permit.id), utcnow())
    (walk,) = [o for o in items if o.kind == "walk_through"]
    assert walk.status == "waived" and walk.citation.endswith("waived under §6.2") and "§380-8" not in walk.reason
