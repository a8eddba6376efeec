"""One draft report signed and submitted from two places at once (the inspector's tablet and laptop, or two tabs),
and a background save landing while it is submitted.

SPEC *Offline-first*: "A report is submitted once, whatever Back, a second tab or a retry does". A gate inside the
service lets both requests read the draft before either writes, as two gunicorn workers do when both posts arrive
together; the second's write then meets the database's guard on the row the first signed, and is answered with
the locked page (it was a 500, which an outbox sends again)."""
from __future__ import annotations

import datetime as dt
import threading

from sqlalchemy import func, select

from factories import SignedIn
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.reporting import submission
from inspect_app.reporting import views
from tests.inspections.report_helpers import filled, report_form, start
from tests.races import at_once, gated


def _site(app, make):
    inspector = make.user("inspector")
    permit = make.permit(owner=make.user("permittee"), inspectors=[inspector],
                         construction_started_on=dt.date(2026, 6, 2))
    tablet, laptop = SignedIn(app.test_client(), inspector), SignedIn(app.test_client(), inspector)
    report = start(tablet, permit, "periodic")
    return inspector, tablet, laptop, report.id


def test_a_report_signed_on_two_devices_at_once_is_submitted_once_and_the_other_is_told(app, make, monkeypatch):
    """Tablet and laptop each hold the draft's page and tap *Sign and submit* together (no shared idempotency key:
    two pages): submitted once, and the other device gets the "already submitted" page (the second's UPDATE met
    the row the first had made final, and the device got a 500, which an outbox sends again)."""
    _, tablet, laptop, report_id = _site(app, make)
    url = f"/inspections/{report_id}"
    forms = [filled(device.get(url).text, notes=f"from the {name}") for device, name in
             ((tablet, "tablet"), (laptop, "laptop"))]
    gated(monkeypatch, submission, "submit_report")
    answers = at_once(lambda: tablet.post(url + "/submit", forms[0]), lambda: laptop.post(url + "/submit", forms[1]))
    codes = sorted(a.status_code for a in answers)
    assert db.session.scalar(select(func.count()).select_from(AuditEntry).where(
        AuditEntry.action == "inspection.submit", AuditEntry.entity_id == report_id)) == 1
    assert codes == [303, 403], [getattr(a, "text", "")[:200] for a in answers]


def test_an_autosave_from_another_tab_during_submission_is_not_a_server_error(app, make, monkeypatch):
    """Tab A submits while tab B's autosave (X-Autosave, the page's revision) is on its way: neither is a server
    error (B's count of the revision met the guard on the row A had just submitted: a 500, and autosave.js showed a
    server fault, not "this report was submitted")."""
    inspector, tab_a, tab_b, report_id = _site(app, make)
    url = f"/inspections/{report_id}"
    submit_form = filled(tab_a.get(url).text)
    autosave = report_form(tab_b.get(url).text)[0] | {"notes": "typed in tab B", "posted_by": inspector.id,
                                                       "csrf_token": tab_b.token}
    # A's submit and B's save each wait at one gate once they have read the draft; B's then writes once A's answer
    # is out (the order in which the guard is met).
    gate, submitted = threading.Barrier(2), threading.Event()

    def gated(original, after=None):
        def waiting(*args, **kwargs):
            try:
                gate.wait(timeout=2)
            except threading.BrokenBarrierError:
                pass
            if after is not None:
                after.wait(timeout=3)
            return original(*args, **kwargs)
        return waiting

    monkeypatch.setattr(views, "_stale", gated(views._stale, after=submitted))
    monkeypatch.setattr(submission, "submit_report", gated(submission.submit_report))

    def submit_a():
        try:
            return tab_a.post(url + "/submit", submit_form)
        finally:
            submitted.set()

    answers = at_once(submit_a, lambda: tab_b.client.post(url, data=autosave, headers={"X-Autosave": "1"}))
    # A submits; B's save finds the report submitted: the locked page, which autosave.js says so of.
    assert answers[0].status_code == 303, answers[0].status_code
    assert answers[1].status_code == 403 and "submitted" in answers[1].text, answers[1].status_code
    db.session.expire_all()
    assert db.session.get(Inspection, report_id).is_submitted
