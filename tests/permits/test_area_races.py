"""A device's `area.status` push lands while the web form changes the same disturbed area: two gunicorn workers
answering the tablet and the office at the same moment. A gate in the web request's service call lets the push run
between the form's read of the area and its write."""
from __future__ import annotations

import datetime as dt
import threading
import uuid

from sqlalchemy import select

from factories import SignedIn
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.stabilization.models import AreaStatusEvent, DisturbedArea
from inspect_app.types import LOCAL_TZ, utcnow
from sync.services import create_device


def test_a_push_between_the_area_forms_read_and_write_is_neither_hidden_nor_undone(app, make, monkeypatch):
    """The web form read the area, the tablet's push changed it, the form wrote over it from its read: a status
    older than the timeline's newest event, and a revision that hid the change from the device's next push."""
    inspector = make.user("inspector")
    permit = make.permit(owner=make.user("permittee"), inspectors=[inspector], areas=["Lot 1 pad"],
                         construction_started_on=dt.date(2026, 6, 2))
    area = db.session.scalar(select(DisturbedArea).where(DisturbedArea.permit_id == permit.id))
    now = utcnow().replace(second=0, microsecond=0)
    area.status_since = now - dt.timedelta(days=1)  # disturbed since yesterday
    for event in db.session.scalars(select(AreaStatusEvent).where(AreaStatusEvent.area_id == area.id)):
        event.at = area.status_since
    db.session.commit()
    area_id, permit_id, revision = area.id, permit.id, area.revision
    token = create_device(None, inspector, "tablet")[1]
    db.session.commit()
    office = SignedIn(app.test_client(), inspector)

    read, go = threading.Event(), threading.Event()
    original = permits.change_area_status

    def gated(*args, **kwargs):
        if not kwargs.get("batched"):  # the web form's call (the push's is batched)
            read.set()
            go.wait(timeout=5)
        return original(*args, **kwargs)

    monkeypatch.setattr(permits, "change_area_status", gated)
    db.session.remove()
    prefix = f"area-{area_id}-"
    web_at = (now - dt.timedelta(hours=3)).astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M")
    answers = {}
    web = threading.Thread(target=lambda: answers.setdefault("web", office.post(
        f"/permits/{permit_id}/areas/{area_id}/status",
        {prefix + "status": "activity_ceased", prefix + "at": web_at}, htmx="areas")))
    web.start()
    assert read.wait(timeout=10)
    # The tablet, offline earlier, sends what it recorded: stabilization began an hour ago, on the revision it saw.
    pushed = app.test_client().post("/sync/push", headers={"Authorization": f"Bearer {token}"}, json={
        "sent_at": utcnow().isoformat(),
        "ops": [{"op_id": str(uuid.uuid4()), "kind": "area.status", "record_id": area_id, "base_revision": revision,
                 "device_time": utcnow().isoformat(),
                 "payload": {"status": "stabilization_initiated", "at": (now - dt.timedelta(hours=1)).isoformat()}}]})
    assert pushed.status_code == 200, pushed.text
    answer = pushed.get_json()["results"][0]
    assert answer["status"] == "applied", answer
    go.set()
    web.join(timeout=30)

    db.session.expire_all()
    area = db.session.get(DisturbedArea, area_id)
    events = list(db.session.scalars(select(AreaStatusEvent).where(AreaStatusEvent.area_id == area_id)
                                     .order_by(AreaStatusEvent.at)))
    changes = len(events) - 1  # after the area was made
    # Every change counts: two changes after revision 1 is revision 3, so a device that saw the push's revision is
    # told of the web change (conflict), not silently applied over it.
    # The area's status is the newest event of its timeline (stabilization_initiated an hour ago), not the web
    # form's earlier "activity ceased" written over it from a stale read.
    assert (area.revision, area.status, area.status_since) == (revision + changes, events[-1].status, events[-1].at)
    # The office is told why its change was not kept: the area changed since (the tablet's, later, time).
    assert answers["web"].status_code == 422 and "since" in answers["web"].text
    assert "stabilization initiated since" in answers["web"].text.replace("_", " ")
