"""A field copy and the central record, two live instances, synced with `flask sync pull|push`."""
from __future__ import annotations

import datetime as dt
import hashlib
import threading
from decimal import Decimal

from sqlalchemy import func, select

from inspect_app.accounts.models import User
from inspect_app.inspections import services as inspections
from inspect_app.extensions import db
from inspect_app.inspections.models import InspectionNotice
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.photos import services as photos
from inspect_app.blobs.models import Blob
from inspect_app.photos.models import Photo
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import utcnow
from sync.client import SyncClient
from sync.models import OutboxItem, SyncOperation
from tests.builders import jpeg


def run(field, *args: str) -> str:
    """`flask sync ...` on the field copy, in a thread of its own so no other app's context leaks in."""
    results = []
    thread = threading.Thread(target=lambda: results.append(
        field.app.test_cli_runner().invoke(args=["sync", *args])))
    thread.start()
    thread.join(60)
    assert results[0].exit_code == 0, results[0].output
    return results[0].output


def test_pull_then_push_local_work_lands_once_in_the_central_record(app, make, central, field, device_token):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad", "Access drive"])
    hidden_area_id = make.permit(areas=["Elsewhere"]).areas[0].id  # not assigned: must not reach the device
    token = device_token(inspector)

    run(field, "pull", "--server", central.url, "--token", token)
    with field.app.app_context():
        local_areas = {a.name: a for a in db.session.scalars(select(DisturbedArea))}
        assert set(local_areas) == {"Lot 1 pad", "Access drive"}
        local_inspector = db.session.get(User, inspector.id)
        area = local_areas["Lot 1 pad"]
        # The inspector's work on the laptop, through the app's own services and models.
        permits.change_area_status(local_inspector, area, "activity_ceased", utcnow(),
                                   "grading done")
        local_permit = db.session.get(Permit, permit.id)
        notice = inspections.give_notice(local_inspector, local_permit, "erosion_control",
                                         utcnow() + dt.timedelta(hours=30))
        photo_bytes = jpeg()
        sha = hashlib.sha256(photo_bytes).hexdigest()
        photo = photos.store_photo(local_inspector, local_permit, photo_bytes, caption="silt fence at the outlet")
        db.session.commit()
        notice_id, photo_id, area_id = notice.id, photo.id, area.id

    output = run(field, "push", "--server", central.url, "--token", token)
    assert "applied=3" in output

    db.session.expire_all()
    area = db.session.get(DisturbedArea, area_id)
    assert (area.status, area.revision, area.has_conflict) == ("activity_ceased", 2, False)
    assert [e.note for e in area.events][-1] == "grading done"
    central_notice = db.session.scalar(select(InspectionNotice))
    assert (central_notice.given_by_id, central_notice.inspection_type) == (inspector.id, "erosion_control")
    assert central_notice.id == notice_id  # the record keeps the id it was given on the device
    central_photo = db.session.get(Photo, photo_id)
    assert central_photo.caption == "silt fence at the outlet"
    assert central_photo.display_sha256 != sha  # the central record made its own renditions
    assert db.session.get(Blob, sha).size == len(photo_bytes)

    # Pushing again sends nothing new, and replaying the confirmed operations changes nothing.
    assert "queued=0" in run(field, "push", "--server", central.url, "--token", token)
    with field.app.app_context():
        items = list(db.session.scalars(select(OutboxItem)))
        assert {i.status for i in items} == {"applied"}
        ops = [{"op_id": i.op_id, "kind": i.kind, "record_id": i.record_id, "base_revision": i.base_revision,
                "device_time": i.device_time, "payload": i.payload} for i in items]
    answers = SyncClient(central.url, token).push(ops)
    assert {a["status"] for a in answers} == {"duplicate"}
    assert db.session.scalar(select(func.count()).select_from(SyncOperation)) == 3
    assert db.session.scalar(select(func.count()).select_from(InspectionNotice)) == 1
    assert db.session.scalar(select(func.count()).select_from(Photo)) == 1

    # A change made on the central record reaches the field copy on the next pull.
    permits.change_area_status(None, db.session.get(DisturbedArea, area_id), "stabilization_initiated", utcnow())
    db.session.commit()
    assert "permits=1" in run(field, "pull", "--server", central.url, "--token", token)
    with field.app.app_context():
        local = db.session.get(DisturbedArea, area_id)
        assert (local.status, local.revision) == ("stabilization_initiated", 3)
        assert db.session.get(DisturbedArea, hidden_area_id) is None
        assert local.acres == Decimal("0.500")
