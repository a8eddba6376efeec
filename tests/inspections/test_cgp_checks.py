"""What the CGP asks of an erosion-control report (issue 20, items 3-5): the discharges at each point of
discharge, each control found wanting tied to its corrective action, the CGP's areas on the checklist and an
area not inspected because unsafe. Read as the inspector reads the page and as a reviewer reads the PDF."""
from __future__ import annotations

import datetime as dt
import io
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from pypdf import PdfReader

from inspect_app import rules
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.inspections import canonical
from inspect_app.permits import services as permits
from inspect_app.permits.services import profile_of
from inspect_app.profiles import ProfileError, load_profile
from inspect_app.types import LOCAL_TZ, utcnow
from tests.builders import jpeg
from tests.inspections.report_helpers import error_beside, filled, start, submit


def pdf_text(inspection: Inspection) -> str:
    db.session.refresh(inspection)  # as submitted by the request
    pdf = documents.inspection_report_pdf(inspection)
    return re.sub(r"\s+", " ", " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages))


def page_text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def site(make):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    outfall = permits.add_structure(None, permit, name="Outfall OF-1 to Cooley Brook", kind="outfall")
    fence = permits.add_structure(None, permit, name="Silt fence, east line", kind="bmp")
    db.session.commit()
    return SimpleNamespace(permit=permit, inspector=inspector, outfall=outfall, fence=fence)


def _discharge(site, **more) -> dict[str, str]:
    key = f"discharge-{site.outfall.id}"
    return {f"{key}-now": "yes", f"{key}-since_last": "no", **more}


def test_a_discharge_with_sediment_opens_its_corrective_action_and_shows_on_page_and_pdf(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    assert "Discharges at each point of discharge" in page and "Outfall OF-1 to Cooley Brook" in page

    # Not said whether it discharged: refused, the message beside the question.
    refused = submit(client, inspection)
    assert refused.status_code == 422
    assert "say whether it was discharging at the time" in error_beside(refused.text, f"discharge-{site.outfall.id}-now")

    key = f"discharge-{site.outfall.id}"
    seen = _discharge(site, **{f"{key}-signs": "sediment", f"{key}-description": "Brown plume at the headwall"})
    # Visible sediment is a condition requiring corrective action: without one the report is refused.
    refused = submit(client, inspection, **seen)
    assert refused.status_code == 422
    assert "needs a corrective action" in error_beside(refused.text, f"fix-{key}-action")
    assert "CGP 2022 Part 5.1" in error_beside(refused.text, f"fix-{key}-action")
    assert db.session.query(CorrectiveAction).count() == 0  # nothing of a refused submission is kept

    today = utcnow().astimezone(LOCAL_TZ).date().isoformat()
    fix = {f"fix-{key}-repair": "Add a sediment trap above the headwall", f"fix-{key}-first_observed": today,
           f"fix-{key}-kind": "new_or_replacement_control", f"fix-{key}-owner_name": "Site contractor"}
    page = client.get(f"/inspections/{inspection.id}").text
    form = filled(page, **seen, **fix)
    photo = (io.BytesIO(jpeg(40)), "outfall.jpg")
    done = client.post(f"/inspections/{inspection.id}/submit", {**form, f"{key}-photos": photo},
                       content_type="multipart/form-data")
    assert done.status_code == 303, done.text

    db.session.expire_all()
    inspection = db.session.get(Inspection, inspection.id)
    [action] = db.session.query(CorrectiveAction).all()
    assert action.due_at == rules.corrective_action_due("new_or_replacement_control", inspection.performed_at,
                                                        profile_of(site.permit))
    text = page_text(client.get(f"/inspections/{inspection.id}").text)
    assert "At the time: Discharging; since the last inspection: Not discharging." in text
    assert "Seen: Sediment." in text and "Brown plume at the headwall" in text and "(1 photo(s))" in text
    assert "Stormwater discharging from the site carries visible sediment" in text
    assert "Corrective action: Add a sediment trap above the headwall" in text

    printed = pdf_text(inspection)
    assert "Discharges at each point of discharge (CGP 2022 Part 4.6)" in printed
    assert "Outfall OF-1 to Cooley Brook Discharging Not discharging Sediment Brown plume at the headwall" in printed
    assert "Conditions requiring corrective action" in printed and "Add a sediment trap above the headwall" in printed
    record = canonical.report_record(inspection)
    assert record["details"]["discharges"][site.outfall.id]["signs"] == ["sediment"]
    assert len(record["details"]["discharges"][site.outfall.id]["photos"]) == 1
    assert record["details"]["fixes"][key]["action_id"] == action.id


def test_a_point_of_discharge_named_on_a_report_is_asked_again_on_the_next(site, signed_in):
    client = signed_in(site.inspector)
    first = start(client, site.permit, "erosion_control")
    saved = client.post(f"/inspections/{first.id}", filled(client.get(f"/inspections/{first.id}").text,
                                                            discharge_points="Swale outlet at Bliss Road"))
    assert saved.status_code == 303
    db.session.expire_all()
    named = db.session.get(Inspection, first.id).details["discharge_points"][0]["id"]
    answers = {**_discharge(site), f"discharge-{named}-now": "no", f"discharge-{named}-since_last": "no"}
    assert submit(client, first, **answers).status_code == 303

    following = start(client, site.permit, "erosion_control")
    page = client.get(f"/inspections/{following.id}").text
    assert f'name="discharge-{named}-now"' in page and "Swale outlet at Bliss Road" in page


def test_a_point_of_discharge_added_on_the_form_is_answered_in_the_same_post(site, signed_in):
    """Issue 31, rows in place: the point's row comes with the button (`discharge-new-<id>`, made on the device),
    so its answers go with the report that names it, with no save first; a refused report keeps its name."""
    client = signed_in(site.inspector)
    report = start(client, site.permit, "erosion_control")
    point = "7d0f8e4c-2b6a-4c1e-9a57-0c4c3e8d2f11"
    added = {**_discharge(site), f"discharge-new-{point}": "Swale outlet at Bliss Road",
             f"discharge-{point}-now": "no", f"discharge-{point}-since_last": "yes"}
    refused = submit(client, report, **added, evaluation="")
    assert refused.status_code == 422
    assert f'name="discharge-new-{point}" value="Swale outlet at Bliss Road"' in refused.text
    assert f'name="discharge-{point}-since_last" value="yes" checked' in refused.text.replace("  ", " ")

    assert submit(client, report, **added).status_code == 303
    db.session.expire_all()
    details = db.session.get(Inspection, report.id).details
    assert details["discharge_points"] == [{"id": point, "name": "Swale outlet at Bliss Road"}]
    assert (details["discharges"][point]["now"], details["discharges"][point]["since_last"]) == ("no", "yes")


def test_a_control_answered_no_cannot_be_submitted_without_its_fix(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    no = {f"answer-control_installed-{site.fence.id}": "no"}
    refused = submit(client, inspection, **_discharge(site), **no)
    assert refused.status_code == 422
    key = f"fix-control_installed-{site.fence.id}"
    assert "never installed, or was installed incorrectly (CGP 2022 Part 5.1.2) needs a corrective action" \
        in error_beside(refused.text, f"{key}-action")
    assert "say what repair is needed" in error_beside(refused.text, f"{key}-repair")
    assert "first observed" in error_beside(refused.text, f"{key}-first_observed")

    # A slip of the keyboard is no date of this site: a year out of any record, or a day before the permit was issued
    # (the deadline would count from it, and the signed report keep it), is refused beside the field.
    fixing = {f"{key}-repair": "Re-trench the silt fence", f"{key}-kind": "routine_maintenance",
              f"{key}-owner_name": "Site contractor"}
    for typed, words in (("0001-01-01", "between 1900 and 2199"),
                         ((site.permit.issued_on - dt.timedelta(days=1)).isoformat(), "before the permit was issued")):
        refused = submit(client, inspection, **_discharge(site), **no, **fixing, **{f"{key}-first_observed": typed})
        assert refused.status_code == 422 and words in error_beside(refused.text, f"{key}-first_observed"), typed
    assert db.session.query(CorrectiveAction).count() == 0

    # Seen first two days ago: the corrective-action clock runs from then (CGP 2022 Part 5.2).
    first = utcnow().astimezone(LOCAL_TZ).date() - dt.timedelta(days=2)
    fix = {f"{key}-repair": "Re-trench the silt fence", f"{key}-first_observed": first.isoformat(),
           f"{key}-kind": "routine_maintenance", f"{key}-owner_name": "Site contractor"}
    assert submit(client, inspection, **_discharge(site), **no, **fix).status_code == 303
    [action] = db.session.query(CorrectiveAction).all()
    discovered = dt.datetime.combine(first, dt.time(), LOCAL_TZ).astimezone(dt.UTC)
    assert action.discovered_at == discovered
    assert action.due_at == rules.corrective_action_due("routine_maintenance", discovered, profile_of(site.permit))
    assert action.finding.citation == "CGP 2022 Part 5.1.2" and action.finding.location == "Silt fence, east line"

    text = page_text(client.get(f"/inspections/{inspection.id}").text)
    assert "Repair needed: Re-trench the silt fence" in text and "CGP 2022 Part 5.1.2" in text
    printed = pdf_text(db.session.get(Inspection, inspection.id))
    assert "Silt fence, east line: “No”: This control is installed as designed" in printed
    assert "Re-trench the silt fence (Routine maintenance" in printed


@pytest.mark.parametrize(("item", "clause", "words"), [
    ("meets_water_quality", "CGP 2022 Part 5.1.3", "not effective enough for the discharge to meet water quality"),
    ("no_prohibited_discharge", "CGP 2022 Part 5.1.4", "A prohibited discharge (CGP Part 2.3.1)"),
    ("no_required_action_outstanding", "CGP 2022 Part 5.1.5", "EPA (or the state) requires corrective action"),
])
def test_the_cgp_5_1_triggers_beyond_a_control_need_their_corrective_action(site, signed_in, item, clause, words):
    """CGP 2022 Part 5.1: corrective action is also triggered when the controls are not effective enough to meet
    water quality standards, a prohibited discharge is occurring or has occurred, or EPA requires it after its
    inspection (the issue asks for "actions EPA or the state requires")."""
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    no = {f"answer-{item}-site": "no"}
    refused = submit(client, inspection, **_discharge(site), **no)
    assert refused.status_code == 422
    key = f"fix-{item}-site"
    assert f"{words}" in error_beside(refused.text, f"{key}-action") and f"({clause})" in refused.text
    fix = {f"{key}-repair": "Stop the washout and clean the swale", f"{key}-kind": "significant_repair",
           f"{key}-owner_name": "Site contractor",
           f"{key}-first_observed": utcnow().astimezone(LOCAL_TZ).date().isoformat()}
    assert submit(client, inspection, **_discharge(site), **no, **fix).status_code == 303
    [action] = db.session.query(CorrectiveAction).all()
    assert action.finding.citation == clause and action.kind == "significant_repair"


def test_a_control_answered_no_may_be_tied_to_a_corrective_action_already_open(site, signed_in, make):
    earlier = make.inspection(site.permit, status="draft", inspector=site.inspector)
    finding = findings.add_finding(None, earlier, "Silt fence undercut", "East line")
    opened = findings.open_action(None, finding, "significant_repair", "Rebuild the east silt fence",
                                  owner_name="Site contractor")
    db.session.commit()
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    key = f"fix-control_effective-{site.fence.id}"
    first = utcnow().astimezone(LOCAL_TZ).date().isoformat()
    answer = {f"answer-control_effective-{site.fence.id}": "no", f"{key}-repair": "Rebuild it",
              f"{key}-first_observed": first, f"{key}-action": opened.id}
    assert submit(client, inspection, **_discharge(site), **answer).status_code == 303
    assert db.session.query(CorrectiveAction).count() == 1  # linked, not opened again
    assert "Corrective action: Rebuild the east silt fence" in page_text(client.get(f"/inspections/{inspection.id}").text)


def test_a_fix_cannot_be_tied_to_an_action_on_someone_elses_draft(site, signed_in, make):
    # Another inspector's draft is theirs alone (its findings and actions too): its action's id, typed into
    # a hand-made post, neither ties the fix nor shows.
    colleague = make.user("inspector")
    theirs = make.inspection(site.permit, status="draft", inspector=colleague)
    hidden = findings.open_action(None, findings.add_finding(None, theirs, "Silt fence undercut", "East line"),
                                  "significant_repair", "Rebuild the east silt fence", owner_name="Site contractor")
    db.session.commit()
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    assert hidden.id not in client.get(f"/inspections/{inspection.id}").text
    key = f"fix-control_effective-{site.fence.id}"
    answer = {f"answer-control_effective-{site.fence.id}": "no", f"{key}-repair": "Rebuild it",
              f"{key}-first_observed": utcnow().astimezone(LOCAL_TZ).date().isoformat(), f"{key}-action": hidden.id}
    refused = submit(client, inspection, **_discharge(site), **answer)
    assert refused.status_code == 422
    assert error_beside(refused.text, f"{key}-action") == "Choose an open corrective action of this permit."
    assert hidden.id not in refused.text and "Rebuild the east silt fence" not in refused.text
    db.session.expire_all()
    assert db.session.get(Inspection, inspection.id).status == "draft"
    assert db.session.query(CorrectiveAction).count() == 1


def test_a_control_answered_yes_cannot_carry_a_link_to_another_permits_action(site, signed_in, make):
    # A fix is asked only under a "no"; an id posted under a "yes" is still checked, so a report cannot name
    # (and print) an action of another permit.
    elsewhere = make.permit()
    foreign = findings.open_action(None, findings.add_finding(None, make.inspection(elsewhere, status="draft"),
                                                              "Basin silted up"),
                                   "significant_repair", "Dredge the other site's basin", owner_name="Them")
    db.session.commit()
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    key = f"fix-control_effective-{site.fence.id}"
    refused = submit(client, inspection, **_discharge(site), **{f"{key}-action": foreign.id})
    assert refused.status_code == 422
    assert error_beside(refused.text, f"{key}-action") == "Choose an open corrective action of this permit."
    assert "Dredge the other site" not in client.get(f"/inspections/{inspection.id}").text


def test_the_cgp_areas_are_on_the_checklist_and_an_unsafe_area_needs_its_reason(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    for words in ("Dewatering areas", "Fueling and equipment maintenance areas", "non-stormwater discharges",
                  "Barriers protecting resource areas", "Natural buffers", "Areas where stormwater flows"):
        assert words in page
    assert 'value="unsafe"' in page

    unsafe = {"answer-dewatering_areas-site": "unsafe"}
    refused = submit(client, inspection, **_discharge(site), **unsafe)
    assert refused.status_code == 422
    assert "Say why it was unsafe" in error_beside(refused.text, "note-dewatering_areas-site")
    reason = {"note-dewatering_areas-site": "Trench flooded, banks unstable"}
    assert submit(client, inspection, **_discharge(site), **unsafe, **reason).status_code == 303

    text = page_text(client.get(f"/inspections/{inspection.id}").text)
    assert "Site: Not inspected: unsafe: Trench flooded, banks unstable" in text
    printed = pdf_text(db.session.get(Inspection, inspection.id))
    assert "Not inspected: unsafe Trench flooded, banks unstable" in printed


def test_unsafe_is_no_answer_where_the_town_does_not_allow_it(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], structures=["Infiltration bed"])
    client = signed_in(inspector)
    inspection = start(client, permit, "pre_bury")
    page = client.get(f"/inspections/{inspection.id}").text
    assert 'value="unsafe"' not in page
    name = next(n for n in re.findall(r'name="(answer-[^"]+)"', page))
    refused = submit(client, inspection, **{name: "unsafe"})
    assert refused.status_code == 422 and error_beside(refused.text, name) == "Choose yes, no or n/a."


def test_a_town_adds_its_own_checklist_item_with_its_condition_and_a_wrong_key_is_named(tmp_path):
    text = (Path(__file__).parents[2] / "inspect_app/profiles/cgp_baseline.toml").read_text()
    own = text.replace('key = "natural_buffers"', 'key = "natural_buffers"\ncorrective_condition = "needs_repair"')
    town = tmp_path / "town.toml"
    town.write_text(own)
    profile = load_profile(town)
    item = next(i for i in profile.inspection_type("erosion_control").checklist if i.key == "natural_buffers")
    assert profile.condition(item.corrective_condition).citation == "CGP 2022 Part 5.1.1"

    town.write_text(own.replace('corrective_condition = "needs_repair"', 'corrective_condition = "no_such"'))
    with pytest.raises(ProfileError, match="erosion_control.natural_buffers: 'no_such'"):
        load_profile(town)


@pytest.mark.parametrize("kind, citation, words", [
    ("routine_maintenance", "CGP 2022 Part 2.1.4", "A stormwater control needs routine maintenance"),
    ("significant_repair", "CGP 2022 Part 5.1.1",
     "A stormwater control needs repair or replacement (beyond routine maintenance)"),
])
def test_routine_maintenance_is_not_filed_as_repair_beyond_routine_maintenance(kind, citation, words, site,
                                                                               signed_in):
    """CGP 2022 Part 5.1.1 is a control that "needs repair or replacement (beyond routine maintenance)": a control
    not maintained whose fix is routine maintenance is filed under the maintenance requirement instead."""
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    key = f"fix-control_maintained-{site.fence.id}"
    fix = {f"answer-control_maintained-{site.fence.id}": "no", f"{key}-repair": "Clean out the sediment",
           f"{key}-first_observed": utcnow().astimezone(LOCAL_TZ).date().isoformat(), f"{key}-kind": kind,
           f"{key}-owner_name": "Site contractor"}
    assert submit(client, inspection, **_discharge(site), **fix).status_code == 303
    [action] = db.session.query(CorrectiveAction).all()
    assert action.kind == kind and action.finding.citation == citation
    page = page_text(client.get(f"/inspections/{inspection.id}").text)
    printed = pdf_text(db.session.get(Inspection, inspection.id))
    assert f"{words}</strong> <span class=\"muted\">({citation})</span>" in client.get(
        f"/inspections/{inspection.id}").text
    assert citation.removeprefix("CGP 2022 Part ") in printed  # a table cell: its words wrap among the others
    if kind == "routine_maintenance":
        for text in (page, printed):
            assert "beyond routine maintenance" not in text and "5.1.1" not in text


def test_a_corrected_inspection_time_moves_the_discovery_of_its_corrective_actions(site, signed_in):
    """CGP 2022 Part 5.2: the clock runs from discovery, the inspection that recorded the condition: correct the
    inspection's time and the action's "discovered" time and deadline follow it, on the page and in the PDF."""
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    part = "6b1f0c2e-1d4a-4c3e-9b7a-2a6d1e0f4c99"
    finding = {f"finding-new-{part}-description": "Sediment tracked onto the road",
               f"finding-new-{part}-severity": "minor", f"finding-new-{part}-is_violation": "y",
               f"action-new-{part}-kind": "significant_repair", f"action-new-{part}-description": "Rebuild the entrance",
               f"action-new-{part}-owner_name": "Site contractor"}
    page = client.get(f"/inspections/{inspection.id}").text
    assert client.post(f"/inspections/{inspection.id}", filled(page, evaluation="violations", **finding)
                       ).status_code == 303
    [action] = db.session.query(CorrectiveAction).all()
    db.session.refresh(inspection)
    assert action.discovered_at == inspection.performed_at

    corrected = (inspection.performed_at - dt.timedelta(hours=26)).replace(second=0, microsecond=0)
    page = client.get(f"/inspections/{inspection.id}").text
    data = filled(page, evaluation="violations", performed_at=corrected.astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M"))
    assert client.post(f"/inspections/{inspection.id}", data).status_code == 303
    db.session.expire_all()
    action = db.session.get(CorrectiveAction, action.id)
    assert db.session.get(Inspection, inspection.id).performed_at == corrected
    assert action.discovered_at == corrected
    assert action.due_at == rules.corrective_action_due("significant_repair", corrected, profile_of(site.permit))
    printed = pdf_text(db.session.get(Inspection, inspection.id))
    shown = corrected.astimezone(LOCAL_TZ).strftime("%b %-d, %Y %-I:%M %p %Z")
    assert f"Rebuild the entrance Significant repair (within 7 calendar days) Site contractor {shown}" in printed


def test_an_amendment_keeps_the_first_observed_day_it_copied_when_the_permits_issue_date_moved_since(
        site, signed_in):
    """The report's fix was first observed two days ago; the permit's issue date was then corrected to yesterday. Its
    amendment copies the day as signed: refusing it (before the permit was issued) left the correction impossible
    to submit unless the inspector changed a date of the record. A day typed anew is still held to the bound."""
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    no = {f"answer-control_installed-{site.fence.id}": "no"}
    key = f"fix-control_installed-{site.fence.id}"
    today = utcnow().astimezone(LOCAL_TZ).date()
    fix = {f"{key}-repair": "Re-trench the silt fence", f"{key}-first_observed": (today - dt.timedelta(days=2)).isoformat(),
           f"{key}-kind": "routine_maintenance", f"{key}-owner_name": "Site contractor"}
    assert submit(client, inspection, **_discharge(site), **no, **fix).status_code == 303
    site.permit.issued_on = today - dt.timedelta(days=1)
    db.session.commit()

    response = client.post(f"/inspections/{inspection.id}/amend")
    amendment = db.session.get(Inspection, response.headers["Location"].rsplit("/", 1)[-1])
    earlier = {f"{key}-first_observed": (today - dt.timedelta(days=3)).isoformat()}
    refused = submit(client, amendment, **_discharge(site), notes="Corrected", **earlier)
    assert refused.status_code == 422 and "before the permit was issued" in error_beside(refused.text,
                                                                                        f"{key}-first_observed")
    assert submit(client, amendment, **_discharge(site), notes="Corrected").status_code == 303
