"""The maintenance log (§380-14 C(2)(j)): a permittee or inspector logs work; disposal needs material and place."""
from __future__ import annotations

import datetime as dt
import io
import re

import pytest

from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.certifications.models import MaintenanceLogEntry
from inspect_app.extensions import db
from inspect_app.photos.models import Photo
from tests.certifications.om_helpers import local_today
from tests.offline.offline_helpers import jpeg, sha256


def _entries() -> int:
    return db.session.scalar(select(func.count()).select_from(MaintenanceLogEntry))


def _error_beside(html: str, field: str) -> str:
    """The error text shown beside `field` (the macro puts it in #<id>-error right after the input)."""
    match = re.search(rf'<p class="field-error" id="log-{field}-error">(.*?)</p>', html, re.S)
    return re.sub(r"<[^>]+>", "", match.group(1)) if match else ""


def test_disposal_without_location_is_refused_beside_the_field(make, signed_in, owner, completed_permit):
    """§380-14 C(2)(j): a disposal is logged with the type of material and the disposal location."""
    permit = completed_permit(owner)
    browser = signed_in(owner)
    response = browser.post(f"/permits/{permit.id}/om/log", {
        "log-kind": "disposal", "log-performed_on": local_today().isoformat(),
        "log-description": "Cleaned the forebay", "log-material_type": "", "log-disposal_location": "",
        "log-performed_by": "Pat Owner"})
    assert response.status_code == 422
    assert "disposal location" in _error_beside(response.text, "disposal_location")
    assert "type of material" in _error_beside(response.text, "material_type")
    assert _error_beside(response.text, "description") == ""
    assert _entries() == 0


def test_disposal_with_material_and_location_is_logged(make, signed_in, owner, completed_permit):
    permit = completed_permit(owner)
    forebay = next(s for s in permit.structures if s.name == "Forebay F-1")
    browser = signed_in(owner)
    day = local_today() - dt.timedelta(days=3)
    response = browser.post(f"/permits/{permit.id}/om/log", {
        "log-kind": "disposal", "log-performed_on": day.isoformat(), "log-structure_id": forebay.id,
        "log-description": "Vacuumed sediment from the forebay", "log-material_type": "Sediment, 2 cu yd",
        "log-disposal_location": "Town transfer station", "log-performed_by": "Acme Site Services"})
    assert response.status_code == 303
    entry = db.session.scalars(select(MaintenanceLogEntry)).one()
    assert (entry.kind, entry.performed_on, entry.structure_id) == ("disposal", day, forebay.id)
    assert (entry.material_type, entry.disposal_location) == ("Sediment, 2 cu yd", "Town transfer station")
    assert entry.created_by_id == owner.id
    assert db.session.scalar(select(AuditEntry).where(AuditEntry.entity_id == entry.id)).action == "maintenance_log.create"
    page = browser.get(response.headers["Location"])
    assert page.status_code == 200
    assert "Town transfer station" in page.text and "Forebay F-1" in page.text
    log = browser.get(f"/permits/{permit.id}/om/log")
    assert "Vacuumed sediment from the forebay" in log.text


def test_a_future_date_is_refused(make, signed_in, owner, completed_permit):
    permit = completed_permit(owner)
    response = signed_in(owner).post(f"/permits/{permit.id}/om/log", {
        "log-kind": "inspection", "log-performed_on": (local_today() + dt.timedelta(days=2)).isoformat(),
        "log-description": "Looked at the outlet", "log-performed_by": "Pat Owner"})
    assert response.status_code == 422
    assert "future" in _error_beside(response.text, "performed_on")
    assert _entries() == 0


def test_an_assigned_inspector_may_log_too(make, signed_in, owner):
    inspector = make.user("inspector")
    permit = make.permit(owner=owner, inspectors=[inspector])
    response = signed_in(inspector).post(f"/permits/{permit.id}/om/log", {
        "log-kind": "inspection", "log-performed_on": local_today().isoformat(),
        "log-description": "Checked inlet protection", "log-performed_by": inspector.name})
    assert response.status_code == 303
    assert _entries() == 1


def test_the_entry_form_is_made_for_a_phone(make, signed_in, owner, completed_permit):
    permit = completed_permit(owner)
    page = signed_in(owner).get(f"/permits/{permit.id}/om/log").text
    assert 'name="viewport"' in page
    assert re.search(r'<input[^>]*type="date"[^>]*name="log-performed_on"|<input[^>]*name="log-performed_on"[^>]*type="date"', page)
    assert page.count('type="radio"') == 4  # inspection, repair, replacement, disposal: big tap targets
    assert f'value="{local_today().isoformat()}"' in page  # today is filled in



def _repair(day: dt.date) -> dict:
    return {"log-kind": "repair", "log-performed_on": day.isoformat(), "log-description": "Reset the outlet grate",
            "log-performed_by": "Pat Owner"}


def test_photos_come_with_the_entry_as_files_or_as_uploaded_originals(signed_in, owner, completed_permit):
    permit = completed_permit(owner)
    browser = signed_in(owner)
    day = local_today() - dt.timedelta(days=3)
    sent, uploaded = jpeg(8), jpeg(7)
    # A device's outbox names a photo it has not finished uploading: refused, nothing kept.
    missing = browser.post(f"/permits/{permit.id}/om/log", {**_repair(day), "photos_sha256": sha256(uploaded)})
    assert missing.status_code == 422 and "did not finish uploading" in missing.text
    assert db.session.scalar(select(func.count()).select_from(MaintenanceLogEntry)) == 0

    # Uploaded first by the owner's device, in chunks (/sync/blobs), then named by the form.
    headers = {"X-CSRFToken": browser.token, "Upload-Offset": "0", "Content-Type": "application/octet-stream"}
    assert browser.client.put(f"/sync/blobs/{sha256(uploaded)}", data=uploaded, headers=headers).status_code == 200
    assert browser.client.post(f"/sync/blobs/{sha256(uploaded)}/complete", json={"content_type": "image/jpeg"},
                               headers={"X-CSRFToken": browser.token}).status_code == 200
    response = browser.post(f"/permits/{permit.id}/om/log",
                            {**_repair(day), "photos": (io.BytesIO(sent), "a.jpg"), "photos_sha256": sha256(uploaded)},
                            content_type="multipart/form-data")
    assert response.status_code == 303, response.text
    entry = db.session.scalars(select(MaintenanceLogEntry)).one()
    photos = db.session.scalars(select(Photo).where(Photo.log_entry_id == entry.id)).all()
    assert sorted(p.original_sha256 for p in photos) == sorted([sha256(sent), sha256(uploaded)])


# §380-14 C(2)(e): "Records of installation and maintenance"; C(2)(i): "An operation and maintenance log form".
# (clause, kind of work, the label the log shows)
LOG_FORM = [
    ("§380-14 C(2)(i)", "inspection", "Inspection"),
    ("§380-14 C(2)(e)", "repair", "Repair"),
    ("§380-14 C(2)(e)", "replacement", "Replacement"),
]


@pytest.mark.parametrize("clause, kind, shown", LOG_FORM)
def test_the_log_form_records_each_kind_of_maintenance(clause, kind, shown, make, signed_in, owner, completed_permit):
    permit = completed_permit(owner)
    browser = signed_in(owner)
    response = browser.post(f"/permits/{permit.id}/om/log", {
        "log-kind": kind, "log-performed_on": local_today().isoformat(),
        "log-description": f"Basin outlet: {kind}", "log-performed_by": "Acme Site Services"})
    assert response.status_code == 303
    log = browser.get(f"/permits/{permit.id}/om/log").text
    assert f"Basin outlet: {kind}" in log and shown in log and _entries() == 1
