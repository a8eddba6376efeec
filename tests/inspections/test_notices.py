"""The engineer's notice to the authority at least 24 hours before each inspection (§380-16 C(3))."""
from __future__ import annotations

import datetime as dt
import io
import re
from types import SimpleNamespace

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select

from inspect_app.documents.services import inspection_report_pdf
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.inspections import canonical, services
from inspect_app.reporting import notification
from inspect_app.inspections.models import Inspection, InspectionNotice
from inspect_app.types import LOCAL_TZ, utcnow
from tests.inspections.report_helpers import mail_to, report_form, start, submit


@pytest.fixture
def site(make):
    inspector, agent = make.user("inspector"), make.user("agent")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 15))
    return SimpleNamespace(permit=permit, inspector=inspector, agent=agent)


def _local(at: dt.datetime) -> str:
    return at.astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")


def test_scheduling_an_inspection_records_the_notice_and_emails_the_authority(site, signed_in):
    client = signed_in(site.inspector)
    planned = utcnow() + dt.timedelta(hours=30)
    response = client.post(f"/permits/{site.permit.id}/inspection-notices", {
        "notice-inspection_type": "pre_bury", "notice-planned_for": _local(planned),
        "notice-note": "Chambers IS-1 ready for backfill"}, htmx="inspections")
    assert response.status_code == 200
    assert response.text.lstrip().startswith('<section class="card" id="inspections">')
    notice = db.session.scalar(select(InspectionNotice))
    assert (notice.inspection_type, notice.given_by_id) == ("pre_bury", site.inspector.id)
    assert 29.9 < notice.hours_ahead < 30.1 and notice.sent_to == site.agent.email
    sent = mail_to(site.agent.email)
    assert len(sent) == 1 and "Pre-bury inspection" in sent[0].subject and "Chambers IS-1" in sent[0].body


def test_the_town_notice_address_wins_over_its_agents(site, signed_in):
    site.permit.jurisdiction.notice_email = "dpw-stormwater@longmeadow.example"
    db.session.commit()
    client = signed_in(site.inspector)
    client.post(f"/permits/{site.permit.id}/inspection-notices", {
        "notice-inspection_type": "final", "notice-planned_for": _local(utcnow() + dt.timedelta(days=2))})
    assert len(mail_to("dpw-stormwater@longmeadow.example")) == 1 and mail_to(site.agent.email) == []


def test_a_notice_for_the_past_is_refused_and_nothing_is_sent(site, signed_in):
    client = signed_in(site.inspector)
    response = client.post(f"/permits/{site.permit.id}/inspection-notices", {
        "notice-inspection_type": "final", "notice-planned_for": _local(utcnow() - dt.timedelta(hours=1))}, htmx="inspections")
    assert response.status_code == 422 and "The planned time must be in the future." in response.text
    assert db.session.scalar(select(func.count()).select_from(InspectionNotice)) == 0
    assert mail_to(site.agent.email) == []


@pytest.mark.parametrize("hours_ahead, given", [(25, True), (2, False)])
def test_a_notice_given_in_time_or_not_is_shown_on_the_report(hours_ahead, given, site, signed_in):
    # The notice was given `hours_ahead` before now, for an inspection planned for now.
    services.give_notice(site.inspector, site.permit, "periodic", utcnow() + dt.timedelta(minutes=1),
                         now=utcnow() - dt.timedelta(hours=hours_ahead))
    db.session.commit()
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "periodic")
    assert inspection.notice_id is not None and inspection.notice_given is given
    assert submit(client, inspection).status_code == 303

    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    assert report.notice_given is given and canonical.report_record(report)["notice"]["given"] is given
    page = client.get(f"/inspections/{report.id}").text
    assert ('id="notice-flag"' in page) is not given
    if not given:
        assert "No 24-hour notice" in page and "2.0 hours ahead" in page
    listed = client.get(f"/permits/{site.permit.id}").text
    assert ("Not given" in listed) is not given


def test_an_inspection_without_any_notice_is_flagged(site, signed_in):
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "walk_through")
    assert inspection.notice_id is None and inspection.notice_given is False
    assert "No 24-hour notice" in client.get(f"/inspections/{inspection.id}").text


def test_a_notice_covers_one_inspection_of_its_type(site, signed_in):
    services.give_notice(site.inspector, site.permit, "erosion_control", utcnow() + dt.timedelta(minutes=1),
                         now=utcnow() - dt.timedelta(hours=30))
    db.session.commit()
    client = signed_in(site.inspector)
    assert start(client, site.permit, "pre_bury").notice_given is False  # another type
    first = start(client, site.permit, "erosion_control")
    page = client.get(f"/inspections/{first.id}").text
    assert client.post(f"/inspections/{first.id}", report_form(page)[0] | {"notes": "Begun."}).status_code == 303
    second = start(client, site.permit, "erosion_control")  # kept: a second Start is a second inspection
    assert second.id != first.id
    assert first.notice_given is True and second.notice_given is False


@pytest.mark.parametrize("planned, given_hours_ago", [
    (dt.timedelta(days=-28), 30 * 24),  # a notice for a pre-bury four weeks ago, never made
    (dt.timedelta(hours=47), 25),  # announced for the day after tomorrow, made today
])
def test_a_notice_covers_the_inspections_of_the_day_it_announced(planned, given_hours_ago, site, signed_in):
    """§380-16 C(3): "The project design engineer shall notify the DPW Director at least 24 hours prior to each
    inspection": a notice tells the Director when to come. One announcing another day counted as this inspection's
    notice, given in time: a month-old notice for a pre-bury never made, or one for two days from now."""
    now = utcnow()
    services.give_notice(site.inspector, site.permit, "pre_bury", now + planned,
                         now=now - dt.timedelta(hours=given_hours_ago))
    db.session.commit()
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "pre_bury")
    assert inspection.notice_id is None and inspection.notice_given is False
    assert "No 24-hour notice" in client.get(f"/inspections/{inspection.id}").text


def test_only_inspectors_give_notices(site, signed_in):
    client = signed_in(site.agent)
    response = client.post(f"/permits/{site.permit.id}/inspection-notices", {
        "notice-inspection_type": "final", "notice-planned_for": _local(utcnow() + dt.timedelta(days=2))})
    assert response.status_code == 403
    assert db.session.scalar(select(func.count()).select_from(InspectionNotice)) == 0


def test_an_erosion_control_inspection_needs_no_advance_notice_on_screen_or_in_the_pdf(site, signed_in):
    # §380-16 C(3) covers the engineer's inspections; erosion-control inspections follow CGP timing
    # (within 24 hours of a storm), so the profile does not list them.
    client = signed_in(site.inspector)
    inspection = start(client, site.permit, "erosion_control")
    assert submit(client, inspection).status_code == 303
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    page = client.get(f"/inspections/{report.id}").text
    assert 'id="notice-flag"' not in page and "Not required for this type of inspection" in page
    assert "Not given" not in client.get(f"/permits/{site.permit.id}").text
    assert "NOT GIVEN" not in notification.report_text(report)
    text = " ".join("".join(page.extract_text() for page in PdfReader(io.BytesIO(inspection_report_pdf(report))).pages).split())
    assert "NOT GIVEN" not in text and "Not required for this type of inspection" in text


def test_the_towns_own_periodic_inspection_owes_no_notice_to_itself(site, signed_in):
    """§380-16 C(3): "The project design engineer shall notify the DPW Director at least 24 hours prior to each
    inspection": the notice is owed to the town, not by it. C(4)(f): "The DPW Director may also be conducting
    their own inspections"; C(4)(b)[2]: random inspections by the DPW Director or their agents."""
    client = signed_in(site.agent)
    inspection = start(client, site.permit, "periodic")
    assert submit(client, inspection).status_code == 303
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    assert report.by_authority
    page = client.get(f"/inspections/{report.id}").text
    assert 'id="notice-flag"' not in page and "Not owed: the authority's own inspection (§380-16 C(3))" in page
    assert "Not given" not in client.get(f"/permits/{site.permit.id}").text
    assert "NOT GIVEN" not in notification.report_text(report)
    text = " ".join("".join(p.extract_text() for p in PdfReader(io.BytesIO(inspection_report_pdf(report))).pages).split())
    assert "NOT GIVEN" not in text and "Not owed: the authority's own inspection" in text
    # The engineer's periodic inspection without a notice is still flagged.
    engineer = signed_in(site.inspector)
    theirs = start(engineer, site.permit, "periodic")
    assert "No 24-hour notice" in engineer.get(f"/inspections/{theirs.id}").text


def test_pre_bury_and_final_are_signed_by_a_registered_engineer(site, make, signed_in):
    # §380-16 C(3): the engineer's inspections need a PE; the erosion-control inspection does not.
    technician = make.user("inspector", pe_number=None)
    permits.assign(None, site.permit, technician, "erosion_control_inspector")
    db.session.commit()
    client = signed_in(technician)
    final = start(client, site.permit, "final")
    refused = submit(client, final)
    assert refused.status_code == 422
    assert "must be signed by a registered professional engineer" in refused.text
    assert db.session.get(Inspection, final.id).status == "draft"
    erosion = start(client, site.permit, "erosion_control")
    assert submit(client, erosion).status_code == 303  # not a PE inspection in the profile


def test_a_notice_given_in_place_comes_back_with_a_blank_form(make, signed_in):
    """Sent in place (htmx), the notice form comes back blank, not holding what was just sent: tapped again, it
    recorded, and mailed the authority, the same notice a second time."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 15))
    client = signed_in(inspector)
    planned = (utcnow() + dt.timedelta(hours=30)).astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    response = client.post(f"/permits/{permit.id}/inspection-notices", {
        "notice-inspection_type": "pre_bury", "notice-planned_for": planned,
        "notice-note": "Chambers IS-1 ready for backfill"}, htmx="inspections")
    assert response.status_code == 200
    assert db.session.scalar(select(func.count()).select_from(InspectionNotice)) == 1
    planned_input = re.search(r'<input[^>]*name="notice-planned_for"[^>]*>', response.text).group(0)
    assert f'value="{planned}"' not in planned_input
    note = re.search(r'<textarea[^>]*name="notice-note"[^>]*>([^<]*)</textarea>', response.text).group(1)
    assert "Chambers IS-1" not in note
