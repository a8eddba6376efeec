"""Why, when and who on an erosion-control report (issue 20, items 1, 2, 6 and 7; CGP 2022 Part 4.7.1):
the schedule in force and the trigger, the storm it answers, the storms since the last report, the
inspector's title, company and contact, start and end, the phase, the permit's NPDES ID, and the
certification of 40 CFR 122.22(d) word for word, on the page and in the PDF."""
from __future__ import annotations

import datetime as dt
import html
import io
import re
from types import SimpleNamespace

import pytest
from pypdf import PdfReader

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.types import LOCAL_TZ, utcnow
from inspect_app.weather.models import StormEvent
from tests.builders import signature_data_url
from tests.inspections.report_helpers import error_beside, filled, start

CFR_122_22_D = (
    "I certify under penalty of law that this document and all attachments were prepared under my direction or "
    "supervision in accordance with a system designed to assure that qualified personnel properly gather and "
    "evaluate the information submitted. Based on my inquiry of the person or persons who manage the system, or "
    "those persons directly responsible for gathering the information, the information submitted is, to the best "
    "of my knowledge and belief, true, accurate, and complete. I am aware that there are significant penalties "
    "for submitting false information, including the possibility of fine and imprisonment for knowing violations."
)


def _text(page: str, element_id: str) -> str:
    """The visible text of the element with `element_id`, tags removed, spaces collapsed."""
    cell = page.split(f'id="{element_id}"', 1)[1].split(">", 1)[1].split("</dd>", 1)[0].split("</p>", 1)[0]
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split())


def _flat(text: str) -> str:
    return " ".join(text.split())


def _whole_hour(hours_ago: float) -> dt.datetime:
    return (utcnow() - dt.timedelta(hours=hours_ago)).replace(minute=0, second=0, microsecond=0)


@pytest.fixture
def stormy(make, signed_in):
    """A 14-day-and-storm permit with construction under way, an inspector with title, company and phone, and a
    0.62 in storm recorded by the station yesterday whose inspection the schedule has open."""
    inspector = make.user("inspector", name="Dana Reyes", title="Senior Stormwater Inspector",
                          organization="Reyes Engineering LLC", phone="413-555-0142")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"], cgp_schedule="every_14_days_and_storm",
                         npdes_id="MAR12A345", construction_started_on=(utcnow() - dt.timedelta(days=10)).date())
    storm = StormEvent(permit_id=permit.id, day=_whole_hour(15).astimezone(LOCAL_TZ).date(), depth_mm=15.7,
                       station_id="72509", started_at=_whole_hour(20), reached_at=_whole_hour(15),
                       ended_at=_whole_hour(8))
    db.session.add(storm)
    db.session.commit()
    return SimpleNamespace(inspector=inspector, permit=permit, storm=storm, client=signed_in(inspector))


def test_a_storm_inspection_says_why_when_and_who_on_the_page_and_in_the_pdf(stormy):
    client, storm = stormy.client, stormy.storm
    inspection = start(client, stormy.permit, "erosion_control")
    # Started while the storm's inspection is open: it answers that storm.
    assert (inspection.trigger, inspection.storm_event_id) == ("storm_event", storm.id)
    page = client.get(f"/inspections/{inspection.id}").text
    assert _text(page, "fact-schedule") == ("At least every 14 calendar days, and within 24 hours of a storm of "
                                            "0.25 in or more (CGP 2022 Part 4.2)")
    assert f'<option value="{storm.id}" selected>' in page
    assert "Storm of 0.62 in (15.7 mm): began" in _text(page, "fact-storms")
    assert "(12 h); Weather station 72509" in _text(page, "fact-storms")

    ended = (utcnow() + dt.timedelta(minutes=1)).astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    answer = client.post(f"/inspections/{inspection.id}/submit",
                         filled(page, ended_at=ended, construction_phase="Mass grading"))
    assert answer.status_code == 303, error_beside(answer.text, "ended_at") or answer.text[:3000]

    page = client.get(f"/inspections/{inspection.id}").text
    assert _text(page, "fact-npdes") == "MAR12A345"
    assert _text(page, "fact-inspector-full") == (f"Dana Reyes, {stormy.inspector.credentials}, Senior Stormwater "
                                                  f"Inspector, Reyes Engineering LLC, 413-555-0142, "
                                                  f"{stormy.inspector.email}")
    assert " to " in _text(page, "fact-when")
    assert _text(page, "fact-phase") == "Mass grading"
    why = _text(page, "fact-why")
    assert why.startswith("Storm event: Storm of 0.62 in (15.7 mm): began") and why.endswith("Weather station 72509")
    assert _flat(CFR_122_22_D) in _text(page, "statement")

    pdf = client.get(f"/documents/inspections/{inspection.id}.pdf")
    assert pdf.status_code == 200
    text = _flat(" ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.data)).pages))
    printed = ("Permit's NPDES ID MAR12A345", "Senior Stormwater Inspector, Reyes Engineering LLC, 413-555-0142",
               "Phase of construction Mass grading",
               "At least every 14 calendar days, and within 24 hours of a storm of 0.25 in or more",
               "Why this inspection Storm event: Storm of 0.62 in (15.7 mm)",
               "Storms since the previous report Storm of 0.62 in (15.7 mm)", CFR_122_22_D)
    assert [line for line in printed if line not in text] == []


def test_a_draft_saved_after_the_site_is_stabilized_states_the_monthly_schedule(stormy):
    """The schedule in force is worked out again from the areas' timeline each time the draft is saved."""
    client, permit = stormy.client, stormy.permit
    inspection = start(client, permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    assert _text(page, "fact-schedule").startswith("At least every 14 calendar days")

    # The only area, disturbed as the permit was made, is stabilized a minute later; the report's time,
    # two minutes after that, is then under the reduced frequency (an area time up to 5 minutes ahead is taken).
    area, now = permit.areas[0], utcnow().astimezone(LOCAL_TZ)
    answer = client.post(f"/permits/{permit.id}/areas/{area.id}/status",
                         {f"area-{area.id}-status": "stabilized",
                          f"area-{area.id}-at": f"{now + dt.timedelta(minutes=1):%Y-%m-%dT%H:%M}"})
    assert answer.status_code == 303, answer.text
    answer = client.post(f"/inspections/{inspection.id}",
                         filled(page, trigger="routine", performed_at=f"{now + dt.timedelta(minutes=3):%Y-%m-%dT%H:%M}"))
    assert answer.status_code == 303, answer.text
    page = client.get(f"/inspections/{inspection.id}").text
    assert _text(page, "fact-schedule") == "At least every month once the whole site is stabilized (CGP 2022 Part 4.4)"


def test_storms_since_the_previous_report_only_and_a_gauge_reading_counts(make, stormy):
    client, permit = stormy.client, stormy.permit
    make.inspection(permit, performed_at=_whole_hour(5), inspector=stormy.inspector)  # after yesterday's storm
    inspection = start(client, permit, "erosion_control")
    # The storm was before the last report: not "since", and its inspection was made.
    assert inspection.trigger == "routine" and inspection.storm_event_id is None
    page = client.get(f"/inspections/{inspection.id}").text
    assert _text(page, "fact-storms").startswith("No storm event since the previous report")

    answer = client.post(f"/inspections/{inspection.id}", filled(page, gauge_precip_in="0.40", trigger="storm_event"))
    assert answer.status_code == 303
    page = client.get(f"/inspections/{inspection.id}").text
    assert "Storm of 0.40 in (10.2 mm): read on the on-site rain gauge at" in _text(page, "fact-storms")


def test_a_storm_inspection_without_its_storm_is_refused_beside_the_field(stormy):
    client = stormy.client
    inspection = start(client, stormy.permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    answer = client.post(f"/inspections/{inspection.id}/submit", filled(page, storm_event_id=""))
    # The posted storm is blank: the draft keeps the one the schedule gave it, so submission goes through...
    assert answer.status_code == 303
    other = start(client, stormy.permit, "periodic")
    page = client.get(f"/inspections/{other.id}").text
    answer = client.post(f"/inspections/{other.id}/submit", filled(page, trigger="storm_event"))
    assert answer.status_code == 422
    assert error_beside(answer.text, "storm_event_id").startswith("Choose the storm this inspection answers")
    db.session.expire_all()
    assert db.session.get(Inspection, other.id).status == "draft"


def test_a_storm_of_another_permit_or_an_unknown_trigger_is_refused(make, stormy):
    client = stormy.client
    elsewhere = make.permit(inspectors=[stormy.inspector])
    foreign = StormEvent(permit_id=elsewhere.id, day=utcnow().date(), depth_mm=9.0, station_id="X1")
    db.session.add(foreign)
    db.session.commit()
    inspection = start(client, stormy.permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    answer = client.post(f"/inspections/{inspection.id}", filled(page, storm_event_id=foreign.id, trigger="whim",
                                                                 ended_at="2020-01-01T08:00"))
    assert answer.status_code == 422
    assert error_beside(answer.text, "storm_event_id") == "Choose one of this permit's storms."
    assert error_beside(answer.text, "trigger") == "Choose why this inspection was made."
    answer = client.post(f"/inspections/{inspection.id}/submit", filled(page, ended_at="2020-01-01T08:00"))
    assert error_beside(answer.text, "ended_at") == "The inspection cannot end before it started."


def test_other_reports_keep_the_towns_own_statement(stormy):
    inspection = start(stormy.client, stormy.permit, "pre_bury")
    page = stormy.client.get(f"/inspections/{inspection.id}").text
    assert 'id="occasion"' not in page
    assert "§380-16 C of the Town's stormwater rules and regulations" in _text(page, "statement")


def test_the_permit_form_keeps_the_npdes_id(make, signed_in, stormy):
    agent = signed_in(make.user("agent"))
    page = agent.get(f"/permits/{stormy.permit.id}").text
    assert _text(page, "permit-npdes") == "MAR12A345"


def test_where_the_town_names_the_permittees_signatory_the_report_carries_both_signatures(make, signed_in):
    inspector = make.user("inspector", town=None)
    permit = make.permit("cgp_baseline", inspectors=[inspector], npdes_id="MAR12A777",
                         construction_started_on=(utcnow() - dt.timedelta(days=3)).date())
    client = signed_in(inspector)
    inspection = start(client, permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    refused = client.post(f"/inspections/{inspection.id}/submit", filled(
        page, permittee_signer_name=None, permittee_signer_title=None, permittee_signature=None))
    assert refused.status_code == 422
    assert error_beside(refused.text, "permittee_signer_name") == (
        "Type the name of the permittee's authorized signatory.")
    assert error_beside(refused.text, "permittee_signature") == (
        "The permittee's authorized signatory signs on the second pad.")
    db.session.expire_all()
    assert db.session.get(Inspection, inspection.id).status == "draft"

    answer = client.post(f"/inspections/{inspection.id}/submit", filled(
        page, permittee_signer_name="Morgan Lee", permittee_signer_title="President, Maple Ridge Homes LLC",
        permittee_signature=signature_data_url(3)))
    assert answer.status_code == 303, answer.text[:2000]
    page = client.get(f"/inspections/{inspection.id}").text
    assert _text(page, "permittee-signed-by").startswith(
        "Signed by Morgan Lee, President, Maple Ridge Homes LLC, for the permittee, on")
    image = client.get(f"/inspections/{inspection.id}/permittee-signature.png")
    assert image.status_code == 200 and image.data.startswith(b"\x89PNG")

    pdf = client.get(f"/documents/inspections/{inspection.id}.pdf")
    reader = PdfReader(io.BytesIO(pdf.data))
    text = _flat(" ".join(p.extract_text() for p in reader.pages))
    assert "Morgan Lee" in text and "President, Maple Ridge Homes LLC, for the permittee" in text
    assert text.count(CFR_122_22_D) == 2  # each signer certifies the same words
    assert sum(len(p.images) for p in reader.pages) == 2  # both drawn signatures
