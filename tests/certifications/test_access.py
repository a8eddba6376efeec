"""A permittee never sees or changes another permittee's permits, log entries, certifications or notices."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import func, select

from inspect_app.certifications.models import (
    Easement, MaintenanceLogEntry, NoticeToCorrect, OMCertification, OMPlan, ResponsibleParty,
)
from inspect_app.extensions import db
from inspect_app.types import utcnow

# Every route of the certifications blueprint that concerns a permit: (method, url, form data).
ROUTES = [
    ("GET", "/permits/{p}/om", None),
    ("POST", "/permits/{p}/om/plan", {"plan-registry_reference": "Taken over"}),
    ("POST", "/permits/{p}/om/easements", {"easement-purpose": "Taken over", "easement-location": "Everywhere"}),
    ("POST", "/permits/{p}/om/easements/{x}", {"e-{x}-purpose": "Taken over", "e-{x}-location": "Everywhere"}),
    ("POST", "/permits/{p}/om/structures/{s}", {"s-{s}-maintenance_task": "Nothing", "s-{s}-maintenance_interval_months": "1"}),
    ("POST", "/permits/{p}/om/parties", {"party-role": "owner", "party-name": "Intruder", "party-starts_on": "2026-01-01"}),
    ("GET", "/permits/{p}/om/log", None),
    ("POST", "/permits/{p}/om/log", {"log-kind": "repair", "log-performed_on": "2026-01-02",
                                     "log-description": "Fake", "log-performed_by": "Intruder"}),
    ("GET", "/permits/{p}/om/log/{e}", None),
    ("GET", "/permits/{p}/om/certify", None),
    ("POST", "/permits/{p}/om/certify", {"cert-signer_name": "Intruder", "cert-agree": "y"}),
    ("GET", "/permits/{p}/om/certifications/{c}", None),
    ("POST", "/permits/{p}/om/certifications/{c}/review", {"review-decision": "accepted"}),
    ("POST", "/permits/{p}/om/notices", {"notice-text": "Fake notice"}),
    ("POST", "/permits/{p}/om/notices/{n}/cured", {}),
]
IDS = [f"{method} {url}" for method, url, _ in ROUTES]
# Routes only agents (review, notices) or agents and admins (plan, parties, schedule) may use.
STAFF_ONLY = {"/permits/{p}/om/plan", "/permits/{p}/om/easements", "/permits/{p}/om/easements/{x}", "/permits/{p}/om/structures/{s}", "/permits/{p}/om/parties",
              "/permits/{p}/om/certifications/{c}/review", "/permits/{p}/om/notices", "/permits/{p}/om/notices/{n}/cured"}


def _world(make, completed_permit, name):
    owner = make.user("permittee", name=name)
    permit = completed_permit(owner, dt.date(2025, 6, 2))
    entry = MaintenanceLogEntry(permit_id=permit.id, kind="inspection", performed_on=dt.date(2025, 7, 1),
                                description=f"{name}'s inspection", performed_by=name)
    cert = OMCertification(permit_id=permit.id, period_start=dt.date(2025, 6, 2), period_end=dt.date(2026, 6, 1),
                           signer_name=name, statement="I certify.", contents={"entry_ids": [], "missing": []})
    easement = Easement(permit_id=permit.id, purpose=f"{name}'s access", location="Lot 1")
    db.session.add_all([entry, cert, easement])
    db.session.flush()
    agent = make.user("agent")
    notice = NoticeToCorrect(permit_id=permit.id, text="Fix it", issued_by_id=agent.id,
                             cure_due_at=utcnow() + dt.timedelta(days=30))
    db.session.add(notice)
    db.session.commit()
    return {"owner": owner, "p": permit.id, "s": permit.structures[0].id, "e": entry.id, "c": cert.id, "n": notice.id, "x": easement.id,
            "number": permit.number}


@pytest.fixture
def worlds(make, completed_permit):
    return _world(make, completed_permit, "Victim"), _world(make, completed_permit, "Intruder")


def _state():
    """Everything the routes could change, to prove a refused request changed nothing."""
    count = lambda model: db.session.scalar(select(func.count()).select_from(model))  # noqa: E731
    db.session.expire_all()
    return (count(MaintenanceLogEntry), count(OMCertification), count(NoticeToCorrect), count(OMPlan),
            sorted(db.session.scalars(select(Easement.purpose))),
            count(ResponsibleParty), sorted(db.session.scalars(select(OMCertification.status))),
            sorted(str(n.cured_at) for n in db.session.scalars(select(NoticeToCorrect))))


def _call(browser, method, url, data, ids):
    url = url.format(**ids)
    if method == "GET":
        return browser.get(url)
    return browser.post(url, {k.format(**ids): v for k, v in data.items()})


@pytest.mark.parametrize("method,url,data", ROUTES, ids=IDS)
def test_another_permittees_permit_does_not_exist(worlds, signed_in, method, url, data):
    victim, intruder = worlds
    browser = signed_in(intruder["owner"])
    before = _state()
    response = _call(browser, method, url, data, victim)
    assert response.status_code == 404
    assert victim["number"] not in response.text
    assert _state() == before


@pytest.mark.parametrize("method,url,data", [r for r in ROUTES if "{" in r[1].removeprefix("/permits/{p}")],
                         ids=[i for r, i in zip(ROUTES, IDS) if "{" in r[1].removeprefix("/permits/{p}")])
def test_another_permits_records_do_not_exist_under_ones_own(worlds, make, signed_in, method, url, data):
    victim, intruder = worlds
    # The intruder's own permit, with the victim's log entry, certification, notice or structure.
    mixed = {**victim, "p": intruder["p"]}
    before = _state()
    # The permittee is refused (403 where only town staff may act); an agent of the town finds nothing.
    refused = _call(signed_in(intruder["owner"]), method, url, data, mixed).status_code
    assert refused == (403 if url in STAFF_ONLY else 404)
    assert _call(signed_in(make.user("agent")), method, url, data, mixed).status_code == 404
    assert _state() == before


@pytest.mark.parametrize("method,url,data", [r for r in ROUTES if r[1] in STAFF_ONLY],
                         ids=[i for r, i in zip(ROUTES, IDS) if r[1] in STAFF_ONLY])
def test_the_owner_may_not_do_the_towns_part(worlds, signed_in, method, url, data):
    victim, _ = worlds
    before = _state()
    assert _call(signed_in(victim["owner"]), method, url, data, victim).status_code == 403
    assert _state() == before


def test_only_the_permittee_certifies(worlds, make, signed_in):
    victim, _ = worlds
    for role in ("agent", "admin"):
        browser = signed_in(make.user(role))
        assert browser.get(f"/permits/{victim['p']}/om/certify").status_code == 403


def test_my_permits_lists_only_ones_own(worlds, signed_in):
    victim, intruder = worlds
    page = signed_in(intruder["owner"]).get("/my-permits")
    assert page.status_code == 200
    assert intruder["number"] in page.text and victim["number"] not in page.text


def test_my_permits_is_the_permittees_page(make, signed_in):
    assert signed_in(make.user("agent")).get("/my-permits").status_code == 302
    assert signed_in().get("/my-permits").status_code in (302, 401)
