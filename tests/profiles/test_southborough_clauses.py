"""Southborough's own clauses, held on its own permits: the stop-work order (§5.0), easements recorded
before the certificate (§7.6 h)) and changes of responsible party (§7.6, Changes to O&M Plans a))."""
from __future__ import annotations

import datetime as dt
import io
import re
from decimal import Decimal

import pytest
from pypdf import PdfReader
from sqlalchemy import select

from inspect_app.certifications import services as om
from inspect_app.certifications.models import Easement, MaintenanceLogEntry, ResponsibleParty
from inspect_app.completion import services as completion
from inspect_app.pages.dashboard.services import timeline
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.inspections.models import ChecklistAnswer
from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.rules import obligations
from inspect_app.schedule.facts import load_records
from inspect_app.types import utcnow
from tests.inspections.report_helpers import start, submit


def test_a_southborough_stop_work_order_stops_all_construction_activity_citing_its_own_clause(make):
    """§5.0 (Stop Work Order): "An order issued which requires that all construction activity on a site be
    stopped." No new area may be disturbed, and the message cites the authority the order rests on, §6.0 ("The
    Conservation Commission shall administer, implement and enforce these Regulations"; §5.0 only defines the
    order), never a Longmeadow section."""
    permit = make.permit("southborough", construction_started_on=dt.date(2026, 6, 2))
    area = permits.add_area(None, permit, "Lot 2", Decimal("0.4"), since=utcnow() - dt.timedelta(days=5))
    permits.change_area_status(None, area, "activity_ceased", utcnow() - dt.timedelta(days=1))
    permit.status = "stop_work"
    db.session.commit()
    with pytest.raises(permits.PermitError) as new_area:
        permits.add_area(None, permit, "Lot 3", Decimal("0.2"))
    assert "no new area may be disturbed until it is lifted (§6.0)" in str(new_area.value)
    with pytest.raises(permits.PermitError) as disturbed:
        permits.change_area_status(None, area, "disturbed", utcnow())
    assert "Lot 2 may not be disturbed" in str(disturbed.value) and "§380" not in str(disturbed.value)
    db.session.rollback()
    assert [a.name for a in db.session.get(type(permit), permit.id).areas] == ["Lot 2"]


def test_southborough_easements_are_recorded_at_the_worcester_registry_before_the_certificate(make):
    """§7.6 h): "Easements shall be recorded with the Worcester County Registry of Deeds prior to issuance of
    a Certificate of Completion by the Commission"."""
    permit = make.permit("southborough", construction_started_on=dt.date(2026, 6, 2))
    db.session.add(Easement(permit_id=permit.id, purpose="Access to the infiltration basin", location="Lot 7"))
    db.session.commit()
    gates = completion.open_gates(permit)
    assert ("Easements not recorded at the Worcester County Registry of Deeds (§7.6 h)): "
            "Access to the infiltration basin.") in gates
    db.session.scalar(select(Easement)).recorded_on = dt.date(2026, 11, 2)
    db.session.commit()
    assert not any("easements" in gate for gate in completion.open_gates(permit))


def test_a_change_of_southborough_owner_is_recorded_and_the_new_owner_bound(make):
    """§7.6, Changes to O&M Plans a): "The owner(s) of the stormwater management system must notify the
    Commission of changes in ownership or assignment of financial responsibility"."""
    owner = make.user("permittee", town=None)
    permit = make.permit("southborough", owner=owner, construction_started_on=dt.date(2025, 6, 2))
    agent = make.user("agent", town="southborough")
    om.change_responsible_party(agent, permit, role="owner", name="First Owner LLC", email="first@example.org",
                                address=None, starts_on=dt.date(2026, 1, 5))
    om.change_responsible_party(agent, permit, role="owner", name="Second Owner LLC", email="second@example.org",
                                address="4 Main St", starts_on=dt.date(2026, 9, 1))
    db.session.commit()
    first, second = db.session.scalars(select(ResponsibleParty).order_by(ResponsibleParty.starts_on)).all()
    assert (first.name, first.ends_on) == ("First Owner LLC", dt.date(2026, 9, 1))
    assert (second.name, second.ends_on) == ("Second Owner LLC", None)
    [notice] = [m for m in db.session.scalars(select(OutboundEmail)) if "second@example.org" in m.to]
    assert "in place of First Owner LLC" in notice.body and "Conservation Commission" in notice.body
    assert "§380" not in notice.body


def test_southborough_log_sheets_are_kept_from_the_commencement_of_construction(make, signed_in):
    """§7.6 d)(6): "An Inspection and Maintenance Schedule log sheet shall be created at commencement of
    construction ... filled out whenever inspection or maintenance is performed": the log takes entries while
    the permit is still under construction, not only after the certificate."""
    engineer = make.user("inspector", town="southborough")
    permit = make.permit("southborough", inspectors=[engineer], structures=["Basin B-1"],
                         construction_started_on=dt.date(2026, 6, 2))
    assert permit.status == "active"
    response = signed_in(engineer).post(f"/permits/{permit.id}/om/log", {
        "log-kind": "inspection", "log-performed_on": "2026-06-15", "log-description": "Basin inlet checked, clear",
        "log-material_type": "", "log-disposal_location": "", "log-performed_by": engineer.name})
    assert response.status_code == 303
    [entry] = db.session.scalars(select(MaintenanceLogEntry)).all()
    assert (entry.permit_id, entry.kind, entry.performed_on) == (permit.id, "inspection", dt.date(2026, 6, 15))


# §5.0 (Certificate of Completion): "A document issued by the Conservation Commission after all construction
# activities have been completed which states that all conditions of an issued SMP have been met".
# (what is left open on the permit, the gate the certificate names)
OPEN_CONDITIONS = [
    ("§5.0 (Certificate of Completion)", "finding", "Findings not corrected: Silt fence down at the east line."),
    ("§5.0 (Certificate of Completion)", "area", "Areas not stabilized: Lot 3."),
    ("§5.0 (Certificate of Completion)", "stop_work", "A stop-work order stands on the permit."),
]


@pytest.mark.parametrize("clause, left_open, gate", OPEN_CONDITIONS)
def test_a_southborough_certificate_waits_until_every_condition_is_met(clause, left_open, gate, make):
    permit = make.permit("southborough", construction_started_on=dt.date(2026, 6, 2))
    final = make.inspection(permit, "final")
    # 1.5 acres disturbed: a NPDES filing was required, and its notice of termination was submitted (§9.6).
    from_final = {"inspection_id": final.id, "item_key": "npdes_notice_of_termination", "answer": "yes"}
    db.session.add(ChecklistAnswer(**from_final))
    db.session.commit()
    assert completion.open_gates(permit) == []
    if left_open == "finding":
        make.finding(permit)
    elif left_open == "area":
        permits.add_area(None, permit, "Lot 3", Decimal("0.2"), since=utcnow() - dt.timedelta(days=3))
    else:
        agent = make.user("agent", town="southborough")
        db.session.add(StopWorkOrder(permit_id=permit.id, reason="Sediment in the brook.", issued_by_id=agent.id))
    db.session.commit()
    gates = completion.open_gates(permit)
    assert gates == [gate] and not any("§380" in g for g in gates)


def test_values_southboroughs_text_does_not_give_are_its_policy_with_a_switch(app, make):
    """The transcribed Southborough regulations (to §9.7) give no advance notice, no yearly O&M certification, no
    cure period and no inspection program: each is marked the Commission's policy, and switching one off stops
    what the schedule owes under it (the CGP's own duties stay)."""
    profile = app.extensions["profiles"]["southborough"]
    rules = (profile.advance_notice, profile.om_certification, profile.cure_period, profile.program)
    assert [(r.basis, r.basis_words, r.enabled) for r in rules] == [("policy", "town policy", True)] * 4
    longmeadow = app.extensions["profiles"]["longmeadow"]
    assert {r.basis for r in (longmeadow.advance_notice, longmeadow.om_certification, longmeadow.cure_period,
                              longmeadow.program)} == {"regulation"}

    permit = make.permit("southborough", structures=["Pipe P-1"], construction_started_on=dt.date(2026, 6, 2))
    (record,) = load_records(select(Permit).where(Permit.id == permit.id))
    now = utcnow()
    kinds = {o.kind for o in obligations(record.facts, profile, now)}
    assert {"pre_bury", "pre_construction", "walk_through"} <= kinds
    off = profile.model_copy(update={"program": profile.program.model_copy(update={"enabled": False}),
                                     "advance_notice": profile.advance_notice.model_copy(update={"enabled": False})})
    kinds_off = {o.kind for o in obligations(record.facts, off, now)}
    assert not {"pre_bury", "pre_construction", "walk_through"} & kinds_off and "inspection" in kinds_off
    assert not off.advance_notice.required_for("final") and profile.advance_notice.required_for("final")
    assert timeline(select(Permit).where(Permit.id == permit.id), now)[1]  # the shipped profile still owes them


def test_southboroughs_own_policies_are_cited_as_its_policy_in_the_schedule_and_its_mail(make):
    """The Commission's policies (its text gives no cure period, no yearly certification, no inspection program)
    are cited as "town policy" where the schedule and the mail give their basis; Longmeadow's regulation is not."""
    owner = make.user("permittee")
    agent = make.user("agent", town="southborough")
    permit = make.permit("southborough", owner=owner, structures=["Pipe P-1"],
                         construction_started_on=dt.date(2026, 6, 2))
    db.session.commit()
    (record,) = load_records(select(Permit).where(Permit.id == permit.id))
    program = [o for o in obligations(record.facts, record.profile, utcnow())
               if o.kind in ("pre_bury", "pre_construction", "walk_through")]
    assert program and all(o.citation.endswith(", town policy") for o in program)

    om.issue_notice(agent, permit, "Clean the sediment out of the forebay.")
    db.session.commit()
    (mail,) = db.session.scalars(select(OutboundEmail).where(OutboundEmail.subject.startswith("Notice to correct")))
    # The cure period is the Commission's policy; what it may do after is its own clause (§6.3), not Longmeadow's
    # court order (§380-14 E), which the notice threatened before.
    assert "(Town text silent on a cure period (§6.3), town policy). If they are not, the Commission may spend any " \
           "Stormwater Maintenance Surety it required to provide the maintenance (§6.3)." in " ".join(mail.body.split())
    assert "court order" not in mail.body and "§380" not in mail.body

    longmeadow = make.permit(structures=["Pipe L-1"], construction_started_on=dt.date(2026, 6, 2))
    db.session.commit()
    (record,) = load_records(select(Permit).where(Permit.id == longmeadow.id))
    assert not any("policy" in o.citation for o in obligations(record.facts, record.profile, utcnow()))


def test_a_southborough_report_pdf_says_town_policy_where_that_is_the_basis(make, signed_in, weather_offline):
    """Issue 32: documents say "town policy", not "regulation", where that is the basis: the PDF of a submitted
    Southborough report gives the basis of its advance-notice line so; a Longmeadow one cites its regulation."""
    engineer = make.user("inspector")
    permit = make.permit("southborough", inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    longmeadow = make.permit(inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(engineer)
    texts = {}
    for site in (permit, longmeadow):
        report = start(browser, site, "erosion_control")
        assert submit(browser, report).status_code == 303
        pdf = browser.get(f"/documents/inspections/{report.id}.pdf")
        assert pdf.status_code == 200 and pdf.mimetype == "application/pdf"
        texts[site.id] = " ".join(" ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.data)).pages)
                                  .split())

    assert re.search(r"24-hour advance notice Not required for this type of inspection \([^)]*town policy\)",
                     texts[permit.id]), texts[permit.id][:1500]
    assert "town policy" not in texts[longmeadow.id]
