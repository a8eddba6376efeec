"""Findings and corrective actions: deadlines (CGP 2022 Part 5.2), close-out, review, and who may do what."""
from __future__ import annotations

import datetime as dt
import io
import re
from types import SimpleNamespace
from zoneinfo import ZoneInfo

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.findings import services
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.inspections import canonical
from inspect_app.inspections import services as inspections
from inspect_app.permits import services as permits
from inspect_app.permits.services import profiles
from inspect_app.types import LOCAL_TZ, utcnow
from tests.inspections.report_helpers import error_beside, filled, save_with_finding, start, submit

ET = ZoneInfo("America/New_York")


@pytest.fixture
def site(make):
    owner, inspector, agent = make.user("permittee"), make.user("inspector"), make.user("agent")
    permit = make.permit(owner=owner, inspectors=[inspector], areas=["Lot 1 pad"],
                         construction_started_on=dt.date(2026, 6, 15))
    return SimpleNamespace(permit=permit, owner=owner, inspector=inspector, agent=agent)


def _finding(client, inspection, text="Silt fence down at the north edge", **extra) -> Finding:
    response = save_with_finding(client, inspection, text, **extra)
    assert response.status_code == 303, response.text
    return db.session.scalar(select(Finding).where(Finding.description == text))


def _open_action(client, finding, kind="routine_maintenance", **extra):
    return client.post(f"/findings/{finding.id}/actions", {
        f"action-{finding.id}-kind": kind, f"action-{finding.id}-description": "Re-trench and re-stake",
        f"action-{finding.id}-owner_name": "Site contractor", **extra}, htmx="findings")


def test_routine_maintenance_found_on_the_friday_before_a_monday_holiday_is_due_tuesday_at_five(app):
    longmeadow = profiles()["longmeadow"]
    found = dt.datetime(2026, 9, 4, 10, 30, tzinfo=ET)  # Friday; Monday Sept 7 is Labor Day
    due = services.action_deadline("routine_maintenance", found, longmeadow)
    assert due.astimezone(ET) == dt.datetime(2026, 9, 8, 17, 0, tzinfo=ET)
    # An ordinary Friday: the next business day is Monday.
    assert services.action_deadline("routine_maintenance", dt.datetime(2026, 9, 11, 16, 0, tzinfo=ET),
                                    longmeadow).astimezone(ET) == dt.datetime(2026, 9, 14, 17, 0, tzinfo=ET)


def test_a_seven_day_action_across_the_november_clock_change_ends_on_the_seventh_local_day(app):
    longmeadow = profiles()["longmeadow"]
    found = dt.datetime(2026, 10, 29, 9, 0, tzinfo=ET)  # EDT; clocks go back on Sunday Nov 1
    for kind in ("new_or_replacement_control", "significant_repair"):
        due = services.action_deadline(kind, found, longmeadow).astimezone(ET)
        assert (due.date(), due.hour, due.minute) == (dt.date(2026, 11, 5), 23, 59)
        assert due.utcoffset() == dt.timedelta(hours=-5) and found.utcoffset() == dt.timedelta(hours=-4)
        # The week that gains the hour back is one hour longer in real time than on the wall clock.
        elapsed = due.astimezone(dt.UTC) - found.astimezone(dt.UTC)
        on_the_wall = due.replace(tzinfo=None) - found.replace(tzinfo=None)
        assert elapsed - on_the_wall == dt.timedelta(hours=1)
        assert on_the_wall == dt.timedelta(days=7, hours=14, minutes=59, seconds=59, microseconds=999999)


def test_opening_an_action_on_a_draft_counts_from_the_inspection_time(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    # The inspection was on Friday Sept 4, 2026 (entered later); Labor Day follows.
    page = client.get(f"/inspections/{inspection.id}").text
    assert client.post(f"/inspections/{inspection.id}", filled(page, performed_at="2026-09-04T10:30")).status_code == 303
    finding = _finding(client, inspection)
    response = _open_action(client, finding)
    assert response.status_code == 200 and "Sep 8, 2026 5:00 PM" in response.text
    action = db.session.scalar(select(CorrectiveAction))
    assert action.due_at.astimezone(ET) == dt.datetime(2026, 9, 8, 17, 0, tzinfo=ET)
    assert (action.owner_name, action.owner_id, action.status) == ("Site contractor", None, "open")


def test_an_action_needs_an_owner_and_says_so(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    finding = _finding(client, inspection)
    response = _open_action(client, finding, **{f"action-{finding.id}-owner_name": ""})
    assert response.status_code == 422 and "Say who will do it" in response.text
    assert db.session.scalar(select(func.count()).select_from(CorrectiveAction)) == 0
    response = _open_action(client, finding, **{f"action-{finding.id}-owner_name": "",
                                                f"action-{finding.id}-owner_id": site.owner.id})
    assert response.status_code == 200
    assert db.session.scalar(select(CorrectiveAction)).owner_name == site.owner.name


def _submitted_with_action(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    finding = _finding(client, inspection, **{"finding-is_violation": "y"})
    assert _open_action(client, finding, kind="significant_repair").status_code == 200
    assert submit(client, inspection, evaluation="violations", corrective_steps="Repair the fence").status_code == 303
    return client, inspection, finding, db.session.scalar(select(CorrectiveAction))


def test_close_out_verify_and_the_finding_is_corrected(site, signed_in):
    client, inspection, finding, action = _submitted_with_action(site, signed_in)
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    bad = client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done,
                                                     f"close-{action.id}-evidence_photo_id": "no-such-photo"}, htmx="findings")
    assert bad.status_code == 422 and "No photo of this permit has that id." in bad.text
    response = client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done,
                                                          f"close-{action.id}-note": "Fence re-trenched"}, htmx="findings")
    assert response.status_code == 200 and "Fence re-trenched" in response.text
    assert client.post(f"/actions/{action.id}/verify", htmx="findings").status_code == 403  # inspectors do not verify

    agent = signed_in(site.agent)
    assert agent.post(f"/actions/{action.id}/verify", htmx="findings").status_code == 200
    db.session.expire_all()
    action = db.session.get(CorrectiveAction, action.id)
    assert (action.status, action.verified_by_id) == ("verified", site.agent.id) and action.verified_at
    assert db.session.get(Finding, finding.id).status == "corrected"
    # Follow-up does not change the submitted record.
    report = db.session.get(Inspection, inspection.id)
    assert canonical.record_hash(report) == report.record_sha256


def test_an_agent_sends_a_finding_back_to_the_field(site, signed_in):
    client, inspection, finding, action = _submitted_with_action(site, signed_in)
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done}, htmx="findings")

    agent = signed_in(site.agent)
    empty = agent.post(f"/findings/{finding.id}/return", {f"return-{finding.id}-comment": ""}, htmx="findings")
    assert empty.status_code == 422 and "Say what must still be done." in empty.text
    response = agent.post(f"/findings/{finding.id}/return", {
        f"return-{finding.id}-comment": "Fence still undermined at station 2+50"}, htmx="findings")
    assert response.status_code == 200
    db.session.expire_all()
    finding, action = db.session.get(Finding, finding.id), db.session.get(CorrectiveAction, action.id)
    assert (finding.status, finding.agent_comment) == ("returned", "Fence still undermined at station 2+50")
    assert (action.status, action.completed_at) == ("open", None)

    field = signed_in(site.inspector)
    page = field.get(f"/inspections/{inspection.id}").text
    assert "Sent back to the field:" in page and "station 2+50" in page
    assert "sent back" in field.get(f"/permits/{site.permit.id}").text
    # The field may open a further action on the returned finding; its clock runs from the discovery at
    # the inspection (CGP 2022 Part 5.2), not from when the action is opened.
    assert _open_action(field, finding, kind="routine_maintenance").status_code == 200
    newest = db.session.scalar(select(CorrectiveAction).where(CorrectiveAction.id != action.id))
    assert newest.discovered_at == db.session.get(Inspection, inspection.id).performed_at


def test_only_a_draft_takes_findings_off(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    finding = _finding(client, inspection)
    _open_action(client, finding)
    assert client.post(f"/findings/{finding.id}/delete", htmx="findings").status_code == 200
    assert db.session.scalar(select(func.count()).select_from(Finding)) == 0
    assert db.session.scalar(select(func.count()).select_from(CorrectiveAction)) == 0
    kept = _finding(client, inspection, "Kept")
    assert submit(client, inspection).status_code == 303
    response = client.post(f"/findings/{kept.id}/delete", htmx="findings")
    assert response.status_code == 403 and "cannot be changed" in response.text
    assert db.session.get(Finding, kept.id) is not None


def test_a_finding_must_name_the_permits_own_area(site, signed_in, make):
    other = make.permit(areas=["Elsewhere"])
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    response = save_with_finding(client, inspection, "Bare soil", area_id=other.areas[0].id)
    [field] = set(re.findall(r'name="(finding-new-[0-9a-f-]{36}-area_id)"', response.text))  # the part posted
    assert response.status_code == 422 and "Not a valid choice" in error_beside(response.text, field)
    assert db.session.scalar(select(func.count()).select_from(Finding)) == 0


def test_an_action_opened_on_a_submitted_reports_finding_is_follow_up_not_the_signed_report(site, signed_in):
    """Its discovery dates from the inspection (the deadline counts from it), which came before the submission: the
    signed record and the report's PDF took it for the report's own, and a reseal (its weather filled in later)
    signed it into a new version under the inspector's name."""
    client, inspection, finding, own = _submitted_with_action(site, signed_in)
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    sealed = report.record_sha256
    assert canonical.record_hash(report) == sealed  # the report's own action, opened on its draft, is in it
    agent = signed_in(site.agent)
    later_words = {f"action-{finding.id}-description": "Sweep Williams Street daily"}
    assert _open_action(agent, finding, kind="significant_repair", **later_words).status_code == 200
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    later = db.session.scalar(select(CorrectiveAction).where(CorrectiveAction.id != own.id))
    assert later.discovered_at <= report.submitted_at  # as the clause counts it
    assert canonical.record_hash(report) == sealed
    actions = [a["id"] for f in canonical.report_record(report)["findings"] for a in f["actions"]]
    assert actions == [own.id]
    pdf = agent.get(f"/documents/inspections/{report.id}.pdf")
    text = " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.data)).pages)
    assert "Re-trench and re-stake" in text and "Sweep Williams Street" not in text


def test_an_action_is_closed_out_only_once_its_report_is_signed_and_not_before_that_inspection(site, signed_in):
    """An action on a draft could be closed out (by form or device): the schedule counted it done before anyone
    signed the report. A close-out could also be dated before the inspection that found the problem still there,
    when the problem was first observed days earlier (its clock then runs from that day)."""
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    finding = _finding(client, inspection, **{"finding-is_violation": "y"})
    # First observed three days before the inspection (the report's "first observed" day for a fix).
    action = services.open_action(site.inspector, finding, "significant_repair", "Re-trench", owner_name="Contractor",
                                  first_observed=(utcnow() - dt.timedelta(days=3)).astimezone(LOCAL_TZ).date())
    db.session.commit()
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    draft = client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done}, htmx="findings")
    assert draft.status_code == 409 and "Submit the report first" in draft.text
    with pytest.raises(services.FindingError, match="Submit the report first"):  # as a device's close-out is
        services.close_out(site.inspector, action, utcnow())
    db.session.rollback()
    assert db.session.get(CorrectiveAction, action.id).status == "open"

    assert submit(client, inspection, evaluation="violations", corrective_steps="Repair the fence").status_code == 303
    db.session.expire_all()
    performed = db.session.get(Inspection, inspection.id).performed_at
    action = db.session.get(CorrectiveAction, action.id)
    assert action.discovered_at < performed - dt.timedelta(days=1)  # first observed three days before
    before = (performed - dt.timedelta(days=1)).astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    early = client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": before}, htmx="findings")
    assert early.status_code == 422
    assert "cannot be done before the inspection that found the problem still there" in early.text
    assert client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done},
                       htmx="findings").status_code == 200


def test_a_corrected_finding_is_not_sent_back(site, signed_in):
    """Sent back once every action was verified, a finding stayed "returned" with nothing open to do."""
    client, inspection, finding, action = _submitted_with_action(site, signed_in)
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done}, htmx="findings")
    agent = signed_in(site.agent)
    assert agent.post(f"/actions/{action.id}/verify", htmx="findings").status_code == 200
    refused = agent.post(f"/findings/{finding.id}/return", {f"return-{finding.id}-comment": "Look again"},
                         htmx="findings")
    assert refused.status_code == 409 and "This finding is corrected" in refused.text
    db.session.expire_all()
    assert db.session.get(Finding, finding.id).status == "corrected"


def test_a_close_out_cannot_show_another_inspectors_draft_photo(site, signed_in, make):
    """A colleague's draft is theirs alone, its photos too; a close-out naming one of them by its id was taken, and
    the close-out's page then pointed at a photo its own author could not open."""
    client, _inspection, _finding_, action = _submitted_with_action(site, signed_in)
    colleague = make.user("inspector", name="Casey Cole")
    permits.assign(None, site.permit, colleague, "design_engineer")
    db.session.commit()
    draft = start(signed_in(colleague), site.permit, "periodic")
    private = make.photo(site.permit, inspection=db.session.get(Inspection, draft.id), caption="Casey's draft photo")
    client = signed_in(site.inspector)
    done = utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    refused = client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done,
                                                         f"close-{action.id}-evidence_photo_id": private.id},
                          htmx="findings")
    assert refused.status_code == 422 and "No photo of this permit has that id." in refused.text
    db.session.expire_all()
    assert db.session.get(CorrectiveAction, action.id).evidence_photo_id is None
    own = make.photo(site.permit, caption="Fence re-trenched")  # a photo of the permit anyone on it sees
    closed = client.post(f"/actions/{action.id}/close", {f"close-{action.id}-completed_at": done,
                                                        f"close-{action.id}-evidence_photo_id": own.id},
                         htmx="findings")
    assert closed.status_code == 200
