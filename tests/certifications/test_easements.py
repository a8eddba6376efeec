"""Stormwater management easements as records of the O&M plan: the purpose and location of each
(§380-14 C(2)(d), C(2)(m); D(2): "The purpose of each easement shall be specified"; Southborough §7.6 d)(4), f)),
shown on the permit page, and each recorded at the registry before the certificate of completion (§380-14 D(4))."""
from __future__ import annotations

import datetime as dt
import html

import pytest
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.certifications import services as om
from inspect_app.certifications.models import Easement
from inspect_app.completion import services as completion
from inspect_app.extensions import db
from tests.certifications.om_helpers import local_today
from tests.inspections.report_helpers import error_beside

TOMORROW = (local_today() + dt.timedelta(days=1)).isoformat()
GOOD = {"purpose": "Access for inspection and maintenance of Basin B-1", "location": "20 ft strip along the east line of Lot 4"}

# (clause, town, what the agent posts, field with the message, the message shown beside it)
REFUSED = [
    ("§380-14 D(2)", "longmeadow", {**GOOD, "purpose": " "}, "purpose",
     "Give the purpose of the easement (§380-14 C(2)(d), D(2))."),
    ("§380-14 C(2)(d)", "longmeadow", {**GOOD, "location": ""}, "location",
     "Give the location of the easement (§380-14 C(2)(d), D(2))."),
    ("§380-14 C(2)(d)", "longmeadow", {**GOOD, "recorded_on": "2026-10-08"}, "registry_reference",
     "Give the Hampden County Registry of Deeds reference (book and page)."),
    ("§380-14 C(2)(d)", "longmeadow", {**GOOD, "registry_reference": "Book 25170, Page 90"}, "recorded_on",
     "Give the date the easement was recorded."),
    ("§380-14 C(2)(d)", "longmeadow", {**GOOD, "registry_reference": "Book 1, Page 1", "recorded_on": TOMORROW},
     "recorded_on", "The recording date cannot be in the future."),
    ("§7.6 f)", "southborough", {**GOOD, "purpose": ""}, "purpose", "Give the purpose of the easement (§7.6 d)(4), f))."),
    ("§7.6 d)(4)", "southborough", {**GOOD, "location": ""}, "location",
     "Give the location of the easement (§7.6 d)(4), f))."),
]


def _post(browser, permit, fields: dict, prefix: str = "easement", easement_id: str | None = None):
    url = f"/permits/{permit.id}/om/easements" + (f"/{easement_id}" if easement_id else "")
    return browser.post(url, {f"{prefix}-{name}": value for name, value in fields.items()})


@pytest.mark.parametrize("clause, town, fields, field, message", REFUSED)
def test_an_easement_without_what_the_clause_requires_is_refused_beside_the_field(
        clause, town, fields, field, message, make, signed_in):
    permit = make.permit(town)
    response = _post(signed_in(make.user("agent", town=town)), permit, fields)
    assert response.status_code == 422
    assert error_beside(response.text, f"easement-{field}") == message
    if town != "longmeadow":
        assert "§380" not in html.unescape(response.text).split('id="easements"')[1].split("</section>")[0]
    assert db.session.scalar(select(func.count()).select_from(Easement)) == 0


def test_a_listed_easement_shows_on_the_permit_page_with_its_purpose_location_and_grantor(
        make, signed_in, agent):
    # §380-14 C(2)(m): "A map and list of stormwater management easements with purpose and location of each".
    permit = make.permit()
    grantor = om.change_responsible_party(None, permit, role="easement_grantor", name="Lot 4 Trust",
                                          email=None, address=None, starts_on=local_today())
    db.session.commit()
    browser = signed_in(agent)
    assert _post(browser, permit, {**GOOD, "grantor_id": grantor.id}).status_code == 303
    page = html.unescape(browser.get(f"/permits/{permit.id}").text)
    section = page.split('id="easements-heading"')[1].split("</table>")[0]
    assert "Stormwater management easements (§380-14 C(2)(d), D(2))" in page
    for shown in (GOOD["purpose"], GOOD["location"], "Lot 4 Trust", "Not recorded"):
        assert shown in section
    easement = db.session.scalar(select(Easement))
    assert db.session.scalar(select(AuditEntry.action).where(AuditEntry.entity_id == easement.id)) == "easement.create"


def test_an_easement_goes_on_the_site_map_with_its_purpose_and_location(make, signed_in, agent):
    # §380-14 C(2)(m): "A map and list of stormwater management easements with purpose and location of each".
    permit = make.permit()
    browser = signed_in(agent)
    assert _post(browser, permit, GOOD).status_code == 303
    easement = db.session.scalar(select(Easement))
    page = html.unescape(browser.get(f"/permits/{permit.id}").text)
    listed = page.split(f'id="point-easement-{easement.id}"')[1].split("</li>")[0]
    assert GOOD["purpose"] in listed and GOOD["location"] in listed and "No point on the map yet." in listed
    assert f'<option value="easement:{easement.id}">Easement: Access for inspection and maintenance of Basin B-1' \
        in page.split('id="point-subject"')[1].split("</select>")[0]

    placed = browser.post(f"/permits/{permit.id}/points", {"point-subject": f"easement:{easement.id}",
                                                           "point-latitude": "42.04502", "point-longitude": "-72.57311"})
    assert placed.status_code == 303
    page = html.unescape(browser.get(f"/permits/{permit.id}").text)
    listed = page.split(f'id="point-easement-{easement.id}"')[0].rsplit("<li", 1)[1] + \
        page.split(f'id="point-easement-{easement.id}"')[1].split("</li>")[0]
    assert 'data-lat="42.04502" data-lon="-72.57311"' in listed and "42.045020, -72.573110" in listed
    assert db.session.scalars(select(AuditEntry.action).where(AuditEntry.entity_id == easement.id)
                              .order_by(AuditEntry.seq)).all() == ["easement.create", "easement.point"]


def test_an_inspector_cannot_place_an_easement(make, signed_in, agent):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    assert _post(signed_in(agent), permit, GOOD).status_code == 303
    easement = db.session.scalar(select(Easement))
    browser = signed_in(inspector)
    assert f"easement:{easement.id}" not in browser.get(f"/permits/{permit.id}").text  # the O&M plan is the agent's
    refused = browser.post(f"/permits/{permit.id}/points", {"point-subject": f"easement:{easement.id}",
                                                            "point-latitude": "42.045", "point-longitude": "-72.573"})
    assert refused.status_code == 422
    db.session.expire_all()
    assert (easement.latitude, easement.longitude) == (None, None)


def test_a_grantor_must_be_one_of_the_permits_easement_grantors(make, signed_in, agent):
    permit = make.permit()
    owner = om.change_responsible_party(None, permit, role="owner", name="Owner LLC", email=None, address=None,
                                        starts_on=local_today())
    db.session.commit()
    response = _post(signed_in(agent), permit, {**GOOD, "grantor_id": owner.id})
    assert response.status_code == 422
    assert db.session.scalar(select(func.count()).select_from(Easement)) == 0


def test_the_certificate_waits_for_every_easement_to_be_recorded(make, signed_in, agent):
    # §380-14 D(4): "Easements shall be recorded with the Hampden County Registry of Deeds prior to issuance
    # of a Certificate of Completion by the DPW Director."
    permit = make.permit()
    browser = signed_in(agent)
    assert _post(browser, permit, GOOD).status_code == 303
    assert _post(browser, permit, {"purpose": "Flood route of the 100-year storm", "location": "Lots 5-6"}).status_code == 303
    assert completion.open_gates(permit) == [
        "Easements not recorded at the Hampden County Registry of Deeds (§380-14 D(4)): "
        f"{GOOD['purpose']}; Flood route of the 100-year storm."]
    first = db.session.scalar(select(Easement).where(Easement.location == GOOD["location"]))
    recorded = {**GOOD, "registry_reference": "Book 25170, Page 90", "recorded_on": "2026-10-08"}
    assert _post(browser, permit, recorded, prefix=f"e-{first.id}", easement_id=first.id).status_code == 303
    assert completion.open_gates(permit) == [
        "Easements not recorded at the Hampden County Registry of Deeds (§380-14 D(4)): "
        "Flood route of the 100-year storm."]
    page = html.unescape(browser.get(f"/permits/{permit.id}/om").text)
    assert "Book 25170, Page 90, Oct 8, 2026" in page


def test_after_the_certificate_a_recorded_easement_cannot_be_made_unrecorded(make, signed_in, agent):
    # §380-14 D(4): recorded "prior to issuance of a Certificate of Completion"; clearing the recording after it
    # would leave a completed permit with an unrecorded easement on its record.
    permit = make.permit()
    browser = signed_in(agent)
    recorded = {**GOOD, "registry_reference": "Book 25170, Page 90", "recorded_on": "2026-10-08"}
    assert _post(browser, permit, recorded).status_code == 303
    easement = db.session.scalar(select(Easement))
    permit.completed_on = dt.date(2026, 10, 20)
    db.session.commit()

    response = _post(browser, permit, {**GOOD, "registry_reference": "", "recorded_on": ""},
                     prefix=f"e-{easement.id}", easement_id=easement.id)
    assert response.status_code == 422
    assert error_beside(response.text, f"e-{easement.id}-registry_reference") == (
        "The certificate of completion was issued with this easement recorded (§380-14 D(4)): "
        "its recording cannot be removed.")
    db.session.expire_all()
    assert (easement.registry_reference, easement.recorded_on) == ("Book 25170, Page 90", dt.date(2026, 10, 8))
    corrected = {**recorded, "registry_reference": "Book 25170, Page 91"}  # a typo may still be put right
    assert _post(browser, permit, corrected, prefix=f"e-{easement.id}", easement_id=easement.id).status_code == 303
