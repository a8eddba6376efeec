"""Southborough's regulation, a second pass clause by clause: what a Southborough permit gets is its own town's rule,
never Longmeadow's. §5.0 (Certificate of Completion: "all construction activities have been completed"), §8.1
(BMPs "constructed properly"), §9.6 (the NPDES notice of termination "if a NPDES construction site filing was
required"), and the clauses the pages and the notice mail cite."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

from inspect_app.completion import services as completion
from inspect_app.extensions import db
from inspect_app.inspections import services
from inspect_app.inspections.models import Inspection
from inspect_app.mail.models import OutboundEmail
from inspect_app.types import utcnow
from tests.inspections.report_helpers import error_beside, start, submit


def test_sb_npdes_gate_not_closed_by_na_when_the_permit_has_an_npdes_filing(make, signed_in, weather_offline):
    """§9.6: "If a NPDES construction site filing was required, at the completion of the project a copy of the
    Notice of Termination of NPDES coverage shall be submitted to the Commission." §5.0 (NPDES): the program covers
    "construction sites which disturb 1-acre or more". A 1.5-acre permit whose record carries its NPDES ID (its
    notice of intent was filed) had a NPDES filing; the engineer's "n/a" on the final must not close the gate."""
    engineer = make.user("inspector", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2),
                         npdes_id="MAR12A001")
    assert permit.disturbed_acres >= 1
    client = signed_in(engineer)
    final = start(client, permit, "final")
    response = submit(client, final, **{"answer-npdes_notice_of_termination-site": "na"})
    assert response.status_code in (303, 422)
    if response.status_code == 422:
        return  # "n/a" refused on a permit with a NPDES filing: what §9.6 asks
    db.session.expire_all()
    keys = [gate.key for gate in completion.gates_open(permit)]
    assert "npdes_notice_of_termination" in keys, "n/a closed the NPDES gate of a permit with an NPDES ID"



def test_sb_npdes_gate_closed_by_na_where_no_filing_was_required(make, signed_in, weather_offline):
    """Half an acre and no NPDES ID: no filing was required, and "n/a" closes the gate (§9.6 "If ...")."""
    engineer = make.user("inspector", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2),
                         disturbed_acres=0.5)
    client = signed_in(engineer)
    final = start(client, permit, "final")
    assert submit(client, final, **{"answer-npdes_notice_of_termination-site": "na"}).status_code == 303
    db.session.expire_all()
    assert "npdes_notice_of_termination" not in [gate.key for gate in completion.gates_open(permit)]

@pytest.mark.parametrize("item", ["punch_list_closed", "bmps_constructed_properly"])
def test_sb_final_with_remaining_work_or_improper_bmp_cannot_be_in_compliance(item, make, signed_in, weather_offline):
    """§5.0 (Certificate of Completion): "A document issued by the Conservation Commission after all construction
    activities have been completed which states that all conditions of an issued SMP have been met"; §8.1: a BMP is
    presumed to comply if it is "c) Constructed properly". A Southborough final answered "no" to "Every item on the
    walk-through punch list is done" (work remaining) or to "Structural BMPs are constructed properly" was accepted
    as "in compliance" and could then be filed as the final report the certificate rests on (§6.3, §9.6).
    Longmeadow's profile marks the same items `no_is_violation`; Southborough's does not."""
    engineer = make.user("inspector", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    client = signed_in(engineer)
    final = start(client, permit, "final")
    response = submit(client, final, **{f"answer-{item}-site": "no"})
    db.session.expire_all()
    assert db.session.get(Inspection, final.id).status == "draft", "a final with this 'no' was submitted compliant"
    assert response.status_code == 422
    assert "must be “violations”" in error_beside(response.text, "evaluation")


def test_sb_as_built_form_rests_on_section_9_6_not_longmeadow(make, signed_in):
    """§9.6: the as-built drawings are "certified by a Registered Professional Engineer". The Southborough
    completion page's as-built form labels its certification box with Longmeadow's §380-15 and §380-16 C(4)(e)[3]."""
    engineer = make.user("inspector", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    page = signed_in(engineer).get(f"/permits/{permit.id}/completion/").text
    assert "As-built drawings (PDF)" in page  # the as-built form is on the page
    assert "§380-15" not in page and "§380-16" not in page


def test_sb_notice_mail_to_the_commission_cites_no_longmeadow_clause(make):
    engineer = make.user("inspector", town="southborough")
    make.user("agent", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    services.give_notice(engineer, permit, "pre_bury", utcnow() + dt.timedelta(hours=30))
    db.session.commit()
    [mail] = [m for m in db.session.scalars(select(OutboundEmail)) if "Inspection notice" in m.subject]
    assert "§380" not in mail.body, mail.body


def test_sb_notice_form_cites_no_longmeadow_clause(make, signed_in):
    engineer = make.user("inspector", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    page = signed_in(engineer).get(f"/permits/{permit.id}").text
    assert "At least 24 hours from now" in page  # the notice form is on the page
    assert "§380-16 C(3)" not in page


def test_sb_permit_form_does_not_state_longmeadows_owner_rule(make, signed_in):
    agent = make.user("agent", town="southborough")
    permit = make.permit("southborough", construction_started_on=dt.date(2026, 6, 2))
    page = signed_in(agent).get(f"/permits/{permit.id}/edit").text
    assert 'name="owner_name"' in page
    assert "§380-10 B(1)" not in page


def test_amending_a_final_na_to_yes_closes_the_npdes_gate(make, signed_in, weather_offline):
    """§9.6: with a NPDES filing, "n/a" on the final now leaves the gate open; the engineer corrects the final by
    amendment (the only way a submitted report changes) answering "yes". The amendment keeps the final's time
    (`services.amend` copies performed_at): the gate reads the latest version, not whichever of the two it met
    first (on SQLite the original's "n/a", and the gate stayed open for good)."""
    engineer = make.user("inspector", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2),
                         npdes_id="MAR12A001")
    client = signed_in(engineer)
    final = start(client, permit, "final")
    assert submit(client, final, **{"answer-npdes_notice_of_termination-site": "na"}).status_code == 303
    db.session.expire_all()
    assert "npdes_notice_of_termination" in [g.key for g in completion.gates_open(permit)]

    response = client.post(f"/inspections/{final.id}/amend")
    assert response.status_code == 303
    amendment = db.session.get(Inspection, response.headers["Location"].rsplit("/", 1)[-1])
    assert submit(client, amendment, **{"answer-npdes_notice_of_termination-site": "yes"}).status_code == 303
    db.session.expire_all()
    stored = db.session.get(Inspection, amendment.id)
    assert stored.status == "submitted"
    assert {a.item_key: a.answer for a in stored.answers}["npdes_notice_of_termination"] == "yes"
    assert stored.performed_at == db.session.get(Inspection, final.id).performed_at  # the tie
    keys = [g.key for g in completion.gates_open(db.session.get(type(permit), permit.id))]
    assert "npdes_notice_of_termination" not in keys


def test_a_longmeadow_admin_making_a_new_permit_is_told_the_permittee_must_be_the_owner(make, signed_in):
    """SPEC *Who uses it*: "the permittee must be the owner, §380-10 B(1)". The new-permit form says so beside the
    owner field for each town offered whose rule it is, as the edit form of a Longmeadow permit does."""
    admin = make.user("admin", town="longmeadow")
    page = signed_in(admin).get("/permits/new")
    assert page.status_code == 200
    assert 'name="owner_name"' in page.text
    assert "in Longmeadow the permittee must be the owner (§380-10 B(1))" in page.text
