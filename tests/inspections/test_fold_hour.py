"""Times shown and posted back in the town's local time on the night the clocks go back, when 1:30 AM happens
twice: a report's untouched time stays the moment it was."""
from __future__ import annotations

import datetime as dt

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from tests.inspections.report_helpers import report_form, start

# Sun 1 Nov 2026: Massachusetts' clocks go back from 2:00 EDT to 1:00 EST, so 1:30 AM happens twice.
SECOND_ONE_THIRTY = dt.datetime(2026, 11, 1, 6, 30, tzinfo=dt.UTC)  # 1:30 AM EST, the second one


def test_saving_a_draft_started_in_the_repeated_hour_does_not_move_it_an_hour_back(make, signed_in):
    """SPEC *The record*: an inspection records its "date/time"; "Submitted inspections are the legal record";
    "Every record says who did what and when".

    A report started at 1:30 AM EST on the fall-back night (the second 1:30) shows "2026-11-01T01:30" in its
    date-and-time field; pressing Save without touching that field read it back as 1:30 AM EDT (the first 1:30,
    fields.local_datetime takes fold=0) and moved the inspection one hour earlier, silently (and its corrective
    actions' discovery and deadlines with it). The posted time is now compared with the stored one as the form
    showed it, on the town's wall clock.
    """
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad"])
    client = signed_in(inspector)
    inspection = start(client, permit, "erosion_control")
    stored = db.session.get(Inspection, inspection.id)
    stored.performed_at = SECOND_ONE_THIRTY  # as `start` stores the server's clock at that moment
    db.session.commit()

    page = client.get(f"/inspections/{inspection.id}").text
    values = report_form(page)[0]
    assert values["performed_at"] == "2026-11-01T01:30"
    saved = client.post(f"/inspections/{inspection.id}", values)  # "Save draft", nothing changed
    assert saved.status_code in (200, 303), saved.status_code
    db.session.expire_all()
    assert db.session.get(Inspection, inspection.id).performed_at == SECOND_ONE_THIRTY
