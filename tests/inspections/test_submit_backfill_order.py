"""A submit and the weather backfill of the same draft at once (PostgreSQL: row locks) take the permit and the report
in one order, and neither waits for the other for ever: the backfill (`flask weather backfill`, and the one each sync
push runs, over drafts too) writes the permit (`weather.remember_station`), then the report's weather, in one flush;
a submit's own first flush takes them in that order too. The backfill's two statements are replayed here on a
connection of their own."""
from __future__ import annotations

import threading

import pytest
from sqlalchemy import text

from inspect_app.extensions import db
from inspect_app.inspections import services as inspections
from tests.inspections.report_helpers import filled
from tests.inspections.test_submit_races import _site


def test_a_submit_and_the_weather_backfill_of_the_same_draft_do_not_deadlock(app, make, monkeypatch):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("row locks: PostgreSQL")
    _, tablet, _, report_id = _site(app, make)
    url = f"/inspections/{report_id}"
    form = filled(tablet.get(url).text)
    from inspect_app.inspections.models import Inspection
    permit_id = db.session.get(Inspection, report_id).permit_id
    held, backfill_waiting = threading.Event(), threading.Event()
    original = inspections._look_up_weather

    def looked_up(inspection):
        held.set()  # the draft is held by now (`reporting.views._held`)
        backfill_waiting.wait(timeout=5)
        return original(inspection)

    monkeypatch.setattr(inspections, "_look_up_weather", looked_up)
    db.session.remove()
    answers: dict[str, object] = {}

    def submit():
        try:
            answers["submit"] = tablet.post(url + "/submit", form).status_code
        except Exception as error:  # noqa: BLE001  (the test app propagates; gunicorn answers 500)
            answers["submit"] = repr(error)

    def backfill():
        try:
            with app.app_context(), db.engine.connect() as connection:
                # weather.remember_station(permit), then _write(inspection): one flush, permits first.
                connection.execute(text("UPDATE permits SET owner_name = owner_name WHERE id = :id"), {"id": permit_id})
                threading.Timer(0.5, backfill_waiting.set).start()
                connection.execute(text("UPDATE inspections SET weather_status = weather_status WHERE id = :id"),
                                   {"id": report_id})
                connection.commit()
            answers["backfill"] = "committed"
        except Exception as error:  # noqa: BLE001
            answers["backfill"] = repr(error)

    with app.app_context():
        first = threading.Thread(target=submit)
        first.start()
        assert held.wait(timeout=20)
        second = threading.Thread(target=backfill)
        second.start()
        first.join(timeout=30)
        second.join(timeout=30)
    assert answers.get("backfill") == "committed" and answers.get("submit") == 303, answers
