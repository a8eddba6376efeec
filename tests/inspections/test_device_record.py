"""A report started on a device with no server: the server's own form, under an id the device made,
created by its first save or submit (create-or-submit), refused with the form's own errors."""
from __future__ import annotations

import io
import re
import uuid

from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.photos.models import Photo
from tests.inspections.report_helpers import error_beside, filled
from tests.offline.offline_helpers import jpeg, sha256

# The town's checklist items asked of each erosion control (profiles/longmeadow.toml).
CONTROL_ITEMS = ("control_installed", "control_maintained", "control_effective")


def reports(permit) -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(Inspection).where(Inspection.permit_id == permit.id))


def new_form(client, permit, kind: str = "erosion_control") -> tuple[str, str]:
    """The new report's page and the placeholder id its form is posted under (the device replaces it)."""
    page = client.get(f"/permits/{permit.id}/inspections/new/{kind}")
    assert page.status_code == 200, page.text
    planned = re.search(r'data-new-record="([^"]+)"', page.text).group(1)
    return page.text, planned


def started_on_a_device(make, signed_in):
    """An inspector's permit, their client, the new report's page and the id a device made for it."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    client = signed_in(inspector)
    page, _ = new_form(client, permit)
    return permit, client, page, str(uuid.uuid4())


def test_the_new_report_form_is_the_report_form_and_keeps_nothing(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    client = signed_in(inspector)

    page, planned = new_form(client, permit)

    assert f'action="/inspections/{planned}"' in page and f'formaction="/inspections/{planned}/submit"' in page
    assert 'name="permit_id"' in page and 'name="idempotency_key"' in page and 'id="checklist"' in page
    assert reports(permit) == 0


def test_a_device_id_creates_and_submits_the_report(make, signed_in):
    permit, client, page, made = started_on_a_device(make, signed_in)

    answer = client.post(f"/inspections/{made}/submit", filled(page, performed_at="2026-06-02T09:30"))

    assert answer.status_code == 303, answer.text
    db.session.expire_all()
    report = db.session.get(Inspection, made)
    assert report.status == "submitted" and report.permit_id == permit.id and report.type == "erosion_control"
    assert reports(permit) == 1


def test_a_device_report_is_where_the_device_was_when_it_gave_its_position(make, signed_in):
    permit, client, page, made = started_on_a_device(make, signed_in)
    assert 'name="latitude"' in page and 'data-geolocate="open"' in page  # asked of the device as the form opens
    where = {"latitude": "42.061234", "longitude": "-72.513456"}

    wrong = client.post(f"/inspections/{made}/submit", filled(page, latitude="142.5", longitude="-72.5"))
    assert wrong.status_code == 400 and "The device location could not be read" in wrong.text
    assert reports(permit) == 0
    refused = client.post(f"/inspections/{made}/submit", filled(page, evaluation=None, **where))
    assert refused.status_code == 422 and 'name="latitude" value="42.061234"' in refused.text  # goes with it again
    answer = client.post(f"/inspections/{made}/submit", filled(refused.text, evaluation="compliant"))

    assert answer.status_code == 303, answer.text
    db.session.expire_all()
    report = db.session.get(Inspection, made)
    assert (report.location_source, report.latitude, report.longitude) == ("device", 42.061234, -72.513456)
    assert client.get(f"/inspections/{made}").text.count("device GPS") == 1


def test_a_refused_new_report_answers_422_with_the_form_and_keeps_nothing(make, signed_in):
    permit, client, page, made = started_on_a_device(make, signed_in)

    refused = client.post(f"/inspections/{made}/submit", filled(page, evaluation=None, signature=""))

    assert refused.status_code == 422
    assert error_beside(refused.text, "evaluation")
    # The corrected form posts under the same device id.
    assert f'formaction="/inspections/{made}/submit"' in refused.text
    assert reports(permit) == 0
    assert client.post(f"/inspections/{made}", filled(page, evaluation=None)).status_code == 303
    assert db.session.get(Inspection, made).status == "draft"


def test_a_device_id_is_not_a_way_into_another_permit(make, signed_in):
    inspector = make.user("inspector")
    mine = make.permit(inspectors=[inspector], areas=["Lot 1"])
    theirs = make.permit(areas=["Lot 2"])
    client = signed_in(inspector)
    page, _ = new_form(client, mine)

    answer = client.post(f"/inspections/{uuid.uuid4()}", filled(page, permit_id=theirs.id))
    malformed = client.post("/inspections/not-a-device-id", filled(page))

    assert answer.status_code in (403, 404) and malformed.status_code == 404
    assert reports(theirs) == 0 and reports(mine) == 0


def test_findings_photos_and_controls_typed_as_parts_of_the_form_come_with_the_report(app, make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    client = signed_in(inspector)
    page, _ = new_form(client, permit)
    made, finding, control = str(uuid.uuid4()), str(uuid.uuid4()), str(uuid.uuid4())
    site_photo, finding_photo = jpeg(1), jpeg(2)
    form = filled(page, evaluation="violations", corrective_steps="Reset it", performed_at="2026-06-02T09:30")
    form |= {f"finding-new-{finding}-description": "Silt fence down", f"finding-new-{finding}-severity": "major",
             f"finding-new-{finding}-is_violation": "y", f"action-new-{finding}-kind": "routine_maintenance",
             f"action-new-{finding}-description": "Reset the fence", f"action-new-{finding}-owner_name": "Contractor",
             f"control-new-{control}": "Silt fence", **{f"answer-{k}-{control}": "yes" for k in CONTROL_ITEMS}}

    # A finding with no description: refused beside its field, nothing kept.
    refused = client.post(f"/inspections/{made}/submit", {**form, f"finding-new-{finding}-description": ""})
    assert refused.status_code == 422
    assert "Describe what was found." in error_beside(refused.text, f"finding-new-{finding}-description")
    assert reports(permit) == 0

    answer = client.post(f"/inspections/{made}/submit",
                         {**form, "photos": (io.BytesIO(site_photo), "site.jpg"),
                          f"finding-new-{finding}-photos": (io.BytesIO(finding_photo), "f.jpg")},
                         content_type="multipart/form-data")
    assert answer.status_code == 303, answer.text
    db.session.expire_all()
    report = db.session.get(Inspection, made)
    assert report.status == "submitted"
    [found] = report.findings
    assert (found.description, found.severity, found.is_violation) == ("Silt fence down", "major", True)
    assert [a.description for a in found.actions] == ["Reset the fence"]
    assert [c["id"] for c in report.details["controls"]] == [control]
    assert {a.item_key for a in report.answers if a.subject_id == control} == set(CONTROL_ITEMS)
    photos = db.session.scalars(select(Photo).where(Photo.permit_id == permit.id)).all()
    assert {(p.original_sha256, p.finding_id) for p in photos} == {(sha256(site_photo), None),
                                                                   (sha256(finding_photo), found.id)}
