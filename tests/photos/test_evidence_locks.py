"""A photo that is evidence in a settled record stays as it was: the close-out photo of any verified corrective
action (one photo may show two actions done), and the photos of maintenance log entries an annual O&M certification
was signed with (§380-14 C(2)(l))."""
from __future__ import annotations

import datetime as dt
import io

from sqlalchemy import select

from inspect_app.certifications.models import MaintenanceLogEntry, OMCertification, ResponsibleParty
from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.photos import services as photos
from inspect_app.rules.calendar import add_months
from tests.certifications.om_helpers import local_today
from tests.photos.photo_builders import make_corrective_action, make_finding, make_inspection, make_jpeg


def _caption(browser, photo, caption: str):
    return browser.post(f"/photos/{photo.id}/caption", {"caption": caption}, htmx=f"photo-{photo.id}")


def test_a_photo_shared_by_two_close_outs_stays_once_either_is_verified(make, login):
    """The photo's lock looked at one of its close-outs, whichever the database gave first: with the other
    verified, its caption could still be changed, and the verified close-out's evidence with it."""
    owner, inspector, agent = make.user("permittee"), make.user("inspector"), make.user("agent")
    permit = make.permit(owner=owner, inspectors=[inspector])
    finding = make_finding(make_inspection(permit, inspector, status="submitted"))
    first, second = make_corrective_action(finding), make_corrective_action(finding)
    evidence = photos.store_photo(inspector, permit, make_jpeg(shade=3), corrective_action=first,
                                  caption="Fence re-staked")
    db.session.commit()
    now = dt.datetime.now(dt.UTC)
    for action in (first, second):
        findings.close_out(inspector, action, now, "done", evidence_photo_id=evidence.id)
    findings.verify(agent, second)
    db.session.commit()
    assert (first.status, second.status) == ("completed", "verified")
    answer = _caption(login(inspector), evidence, "Something else entirely")
    assert "was verified as closed" in answer.text
    db.session.refresh(evidence)
    assert evidence.caption == "Fence re-staked"


def test_photos_of_a_log_entry_certified_stay_as_they_were_signed(make, login):
    """After the annual certification was signed, a certified log entry's photo could be re-captioned and more
    photos added to it: the evidence behind what was signed changed."""
    owner = make.user("permittee", name="Pat Owner")
    completed_on = add_months(local_today(), -12) - dt.timedelta(days=10)
    permit = make.permit(owner=owner, structures=["Forebay F-1"], issued_on=completed_on - dt.timedelta(days=300),
                         construction_started_on=completed_on - dt.timedelta(days=200))
    permit.status, permit.completed_on = "completed", completed_on
    db.session.add(ResponsibleParty(permit_id=permit.id, user_id=owner.id, name=owner.name, role="owner",
                                    email=owner.email, starts_on=completed_on))
    entry = MaintenanceLogEntry(permit_id=permit.id, kind="inspection", performed_on=completed_on + dt.timedelta(30),
                                description="Checked the forebay", performed_by=owner.name)
    db.session.add(entry)
    db.session.commit()
    photo = photos.store_photo(owner, permit, make_jpeg(shade=7), log_entry=entry, caption="Forebay clean")
    db.session.commit()
    browser = login(owner)
    assert _caption(browser, photo, "Forebay clean, outlet clear").status_code == 200  # before signing: free
    assert browser.post(f"/permits/{permit.id}/om/certify", {"cert-agree": "y"}).status_code == 303
    assert entry.id in db.session.scalars(select(OMCertification)).one().contents["entry_ids"]

    assert "part of a signed annual certification" in _caption(browser, photo, "Forebay full of sediment").text
    added = browser.post(f"/permits/{permit.id}/photos?log_entry_id={entry.id}",
                         {"photo": (io.BytesIO(make_jpeg(shade=8)), "site.jpg"), "caption": ""},
                         htmx=f"photos-log_entry-{entry.id}")
    assert added.status_code == 422 and "part of a signed annual certification" in added.text
    db.session.refresh(photo)
    assert photo.caption == "Forebay clean, outlet clear"
    # An entry logged after the signing, dated inside the period, is no part of it: its photos are free.
    late = MaintenanceLogEntry(permit_id=permit.id, kind="inspection", performed_on=completed_on + dt.timedelta(31),
                               description="Outlet checked", performed_by=owner.name)
    db.session.add(late)
    db.session.commit()
    free = browser.post(f"/permits/{permit.id}/photos?log_entry_id={late.id}",
                        {"photo": (io.BytesIO(make_jpeg(shade=9)), "site.jpg"), "caption": "Outlet"},
                        htmx=f"photos-log_entry-{late.id}")
    assert free.status_code == 200
