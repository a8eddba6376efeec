"""Permit forms: good input saves and is audited; bad input shows a message beside the field."""
from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.permits import services
from inspect_app.permits.models import Permit

GOOD = {
    "number": "SWP-2026-100", "site_address": "20 Williams Street, Longmeadow, MA", "latitude": "42.0501",
    "longitude": "-72.5828", "owner_id": "", "owner_name": "Williams LLC", "applicant_name": "Williams LLC",
    "applicant_email": "apply@example.org", "disturbed_acres": "1.5", "is_redevelopment": "0",
    "cgp_schedule": "every_7_days", "surety_amount": "", "issued_on": "2026-06-01",
    "construction_started_on": "",
}


@pytest.fixture
def agent_browser(make, signed_in):
    agent = make.user("agent")
    browser = signed_in(agent)
    return browser, agent


def _count(model) -> int:
    return db.session.scalar(select(func.count()).select_from(model))


def test_agent_creates_a_permit(agent_browser):
    browser, agent = agent_browser
    response = browser.post("/permits/new", {**GOOD, "jurisdiction_id": agent.jurisdiction_id})
    assert response.status_code == 303
    permit = db.session.scalar(select(Permit))
    assert permit.number == "SWP-2026-100" and permit.status == "issued"
    entry = db.session.scalar(select(AuditEntry).where(AuditEntry.entity_id == permit.id))
    assert entry.action == "permit.create" and entry.actor_id == agent.id
    page = browser.get(response.headers["Location"]).text
    assert "SWP-2026-100" in page and "20 Williams Street" in page


def test_construction_start_makes_the_permit_active(agent_browser):
    browser, agent = agent_browser
    browser.post("/permits/new", {**GOOD, "jurisdiction_id": agent.jurisdiction_id,
                                  "construction_started_on": "2026-06-15"})
    assert db.session.scalar(select(Permit)).status == "active"


BAD = [
    ("number", "", "This field is required."),
    ("number", "SW-7\n2026", "A permit number is one line of text, with no line breaks or tabs."),
    ("number", "SW-8\n", "A permit number is one line of text, with no line breaks or tabs."),  # ($ matches before it)
    ("latitude", "north", "Not a valid float value."),
    ("latitude", "95", "Number must be between -90 and 90."),
    ("longitude", "", "Longitude is required."),
    ("disturbed_acres", "-2", "Number must be between 0 and 100000."),
    ("applicant_email", "not-an-email", "Invalid email address."),
    ("issued_on", "06/01/2026", "Not a valid date value."),
    ("construction_started_on", "2026-05-01", "Construction cannot start before the permit is issued."),
    ("sensitive_waters", "y", "Say which water makes the site sensitive."),
    ("cgp_schedule", "every_30_days", "Not a valid choice."),
    # More than its column holds: stored on SQLite, a 500 on PostgreSQL.
    ("surety_amount", "10000000000.00", "The surety must be between $0 and $9,999,999,999.99."),
]


@pytest.mark.parametrize("field,value,message", BAD, ids=[f"{f}={v!r}" for f, v, _ in BAD])
def test_bad_input_is_shown_beside_the_field_and_nothing_is_saved(agent_browser, field, value, message):
    browser, agent = agent_browser
    response = browser.post("/permits/new", {**GOOD, "jurisdiction_id": agent.jurisdiction_id, field: value})
    assert response.status_code == 422
    # The message sits in the field's own error element, tied to the input.
    error_field = "sensitive_waters_note" if field == "sensitive_waters" else field
    assert f'id="{error_field}-error"' in response.text
    assert message in response.text.split(f'id="{error_field}-error"')[1].split("</p>")[0]
    assert _count(Permit) == 0


def test_duplicate_number_is_refused_beside_the_number(agent_browser, make):
    browser, agent = agent_browser
    make.permit(number="SWP-2026-100")
    response = browser.post("/permits/new", {**GOOD, "jurisdiction_id": agent.jurisdiction_id})
    assert response.status_code == 422
    assert "already has a permit with that number" in response.text.split('id="number-error"')[1]
    assert _count(Permit) == 1


def test_agent_cannot_create_a_permit_in_another_town(agent_browser, make):
    browser, _ = agent_browser
    response = browser.post("/permits/new", {**GOOD, "jurisdiction_id": make.town("southborough").id})
    assert response.status_code == 422
    assert "Not a valid choice" in response.text
    assert _count(Permit) == 0


def test_edit_keeps_a_history(agent_browser, make):
    browser, agent = agent_browser
    permit = make.permit()
    data = {**GOOD, "jurisdiction_id": agent.jurisdiction_id, "number": permit.number,
            "site_address": "7 Laurel Lane, Longmeadow, MA"}  # the factory's addresses are on Williams Street
    assert browser.post(f"/permits/{permit.id}/edit", data).status_code == 303
    db.session.expire_all()
    assert db.session.get(Permit, permit.id).site_address.startswith("7 Laurel")
    entry = db.session.scalar(select(AuditEntry).where(AuditEntry.action == "permit.update"))
    assert entry.before["site_address"] != entry.after["site_address"]


def test_impossible_status_change_is_refused(agent_browser, make):
    browser, _ = agent_browser
    permit = make.permit()
    response = browser.post(f"/permits/{permit.id}/status", {"status-status": "final_submissions"})
    assert response.status_code == 422
    assert "Not a valid choice" in response.text
    completed = browser.post(f"/permits/{permit.id}/status", {"status-status": "completed"})
    assert completed.status_code == 422
    assert "A permit is completed by issuing its certificate of completion (§380-18)." in completed.text
    db.session.expire_all()
    assert db.session.get(Permit, permit.id).status == "issued"


def test_htmx_area_form_returns_the_fragment_with_the_error(agent_browser, make):
    browser, _ = agent_browser
    permit = make.permit()
    response = browser.post(f"/permits/{permit.id}/areas", {"area-name": "", "area-acres": "x"}, htmx="areas")
    assert response.status_code == 422
    assert response.text.lstrip().startswith('<section class="card" id="areas">')
    assert "<html" not in response.text
    assert 'id="area-name-error"' in response.text and 'id="area-acres-error"' in response.text


def test_a_boosted_area_form_gets_the_whole_page_not_the_fragment(agent_browser, make):
    # hx-boost sends HX-Request for every form; only the element htmx swaps (HX-Target) gets a fragment.
    browser, _ = agent_browser
    permit = make.permit()
    boosted = {"HX-Request": "true", "HX-Boosted": "true"}
    refused = browser.client.post(f"/permits/{permit.id}/areas", data={
        "csrf_token": browser.token, "area-name": "", "area-acres": "x"}, headers=boosted)
    assert refused.status_code == 422 and "<html" in refused.text and 'id="area-name-error"' in refused.text
    added = browser.client.post(f"/permits/{permit.id}/areas", data={
        "csrf_token": browser.token, "area-name": "Pad A", "area-acres": "0.4"}, headers=boosted)
    assert added.status_code == 303 and added.headers["Location"].endswith(f"/permits/{permit.id}")


def test_htmx_area_added(agent_browser, make):
    browser, _ = agent_browser
    permit = make.permit()
    response = browser.post(f"/permits/{permit.id}/areas", {"area-name": "Pad A", "area-acres": "0.4"},
                            htmx="areas")
    assert response.status_code == 200 and "Pad A" in response.text
    assert [a.name for a in db.session.get(Permit, permit.id).areas] == ["Pad A"]



def test_a_form_that_made_its_change_comes_back_blank(agent_browser, make):
    """An area added, a structure added, an inspector assigned in place: the form comes back empty, not holding what
    was just sent (tapped again, it added the same area a second time)."""
    browser, agent = agent_browser
    inspector = make.user("inspector", name="Casey Cole")
    permit = make.permit()
    areas = browser.post(f"/permits/{permit.id}/areas", {"area-name": "Pad A", "area-acres": "0.4"}, htmx="areas")
    assert areas.status_code == 200 and "Pad A" in areas.text
    assert re.search(r'<input[^>]*name="area-name"[^>]*>', areas.text).group(0).count('value="Pad A"') == 0
    assert 'value="0.4"' not in re.search(r'<input[^>]*name="area-acres"[^>]*>', areas.text).group(0)
    made = browser.post(f"/permits/{permit.id}/structures", {"structure-name": "CB-9", "structure-kind": "catch_basin"},
                        htmx="structures")
    assert made.status_code == 200 and "CB-9" in made.text
    assert 'value="CB-9"' not in re.search(r'<input[^>]*name="structure-name"[^>]*>', made.text).group(0)
    assigned = browser.post(f"/permits/{permit.id}/assignments",
                            {"assign-user_id": inspector.id, "assign-capacity": "design_engineer"}, htmx="assignments")
    assert assigned.status_code == 200 and "Casey Cole" in assigned.text
    assert re.search(rf'<option[^>]*selected[^>]*value="{inspector.id}"|<option[^>]*value="{inspector.id}"[^>]*selected',
                     assigned.text) is None

def test_htmx_area_status_recorded(agent_browser, make):
    browser, agent = agent_browser
    permit = make.permit()
    area = services.add_area(agent, permit, "Pad A", Decimal("0.4"),
                             since=dt.datetime(2026, 11, 2, 13, tzinfo=dt.UTC))
    db.session.commit()
    response = browser.post(f"/permits/{permit.id}/areas/{area.id}/status",
                            {f"area-{area.id}-status": "activity_ceased",
                             f"area-{area.id}-at": "2026-11-20T15:30"}, htmx="areas")
    assert response.status_code == 200 and "Activity ceased" in response.text
    db.session.expire_all()
    area = db.session.get(Permit, permit.id).areas[0]
    assert area.status == "activity_ceased"
    assert [e.status for e in area.events] == ["disturbed", "activity_ceased"]
    assert area.status_since.isoformat() == "2026-11-20T20:30:00+00:00"  # 3:30 pm EST is 20:30 UTC


def test_area_status_before_its_current_status_is_refused(agent_browser, make):
    browser, _ = agent_browser
    permit = make.permit(areas=["Pad"])
    area = permit.areas[0]
    response = browser.post(f"/permits/{permit.id}/areas/{area.id}/status",
                            {f"area-{area.id}-status": "stabilized", f"area-{area.id}-at": "2020-01-01T08:00"},
                            htmx="areas")
    assert response.status_code == 422 and "give a later time" in response.text


def test_area_status_in_the_future_is_refused(agent_browser, make):
    browser, _ = agent_browser
    permit = make.permit(areas=["Pad"])
    area = permit.areas[0]
    response = browser.post(f"/permits/{permit.id}/areas/{area.id}/status",
                            {f"area-{area.id}-status": "stabilized", f"area-{area.id}-at": "2099-01-01T08:00"},
                            htmx="areas")
    assert response.status_code == 422 and "cannot be in the future" in response.text
    db.session.expire_all()
    assert db.session.get(Permit, permit.id).areas[0].status == "disturbed"


def test_only_inspectors_can_be_assigned(agent_browser, make):
    browser, _ = agent_browser
    permit = make.permit()
    owner = make.user("permittee")
    response = browser.post(f"/permits/{permit.id}/assignments",
                            {"assign-user_id": owner.id, "assign-capacity": "design_engineer"}, htmx="assignments")
    assert response.status_code == 422
    assert permit.assignments == []


def test_structure_with_a_duplicate_name_is_refused(agent_browser, make):
    browser, _ = agent_browser
    permit = make.permit(structures=["P-1"])
    response = browser.post(f"/permits/{permit.id}/structures",
                            {"structure-name": "p-1", "structure-kind": "pipe"}, htmx="structures")
    assert response.status_code == 422 and "already has a structure with that name" in response.text


def test_list_filters_by_status(agent_browser, make):
    browser, _ = agent_browser
    make.permit(number="ISSUED-1")
    make.permit(number="ACTIVE-1", construction_started_on=dt.date(2026, 6, 2))
    page = browser.get("/permits/?status=active").text
    assert "ACTIVE-1" in page and "ISSUED-1" not in page
