"""Starting an inspection online, and signing one, looks the weather up before writing anything, so a slow or silent
meteostat never keeps the database's write lock (SQLite has a single writer) from other requests."""
from __future__ import annotations

import datetime as dt
import threading
import time

from sqlalchemy import select, text

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.types import utcnow
from tests.inspections.report_helpers import filled, start


def _write_elsewhere(permit_id: str) -> float:
    """Seconds another connection takes to write, refusing to wait more than 0.3 s for a lock."""
    started = time.monotonic()
    with db.engine.connect() as connection:
        if connection.dialect.name == "sqlite":
            connection.exec_driver_sql("PRAGMA busy_timeout = 300")
        else:
            connection.exec_driver_sql("SET lock_timeout = '300ms'")
        connection.execute(text("UPDATE permits SET owner_name = 'Someone Else' WHERE id = :id"), {"id": permit_id})
        connection.commit()
    return time.monotonic() - started


def test_a_silent_weather_server_does_not_hold_the_database_while_an_inspection_starts(
        app, app_meteostat, permit_at, make, signed_in, quiet_workers, short_socket_timeout):
    now = utcnow()
    for year in {now.year, (now - dt.timedelta(days=1)).year}:
        app_meteostat.hang(f"/hourly/{year}/HNG9.csv.gz")
    app.config["WEATHER_DEADLINE_S"] = 1.5
    inspector = make.user("inspector")
    permit = permit_at("hung", inspectors=[inspector])
    other = make.permit()
    browser = signed_in(inspector)
    asked_before = len(app_meteostat.requests)
    answer = {}

    def start() -> None:
        with app.app_context():
            answer["response"] = browser.post(f"/permits/{permit.id}/inspections", {"type": "erosion_control"})

    starting = threading.Thread(target=start)
    starting.start()
    deadline = time.monotonic() + 5
    while not any("/hourly/" in path for path in app_meteostat.requests[asked_before:]):
        assert time.monotonic() < deadline, (answer, app_meteostat.requests[asked_before:])
        time.sleep(0.01)
    # meteostat is silent now, and the start request waits for it: another writer must not wait.
    assert _write_elsewhere(other.id) < 0.3
    starting.join(10)
    assert answer["response"].status_code == 303
    db.session.expire_all()
    started = db.session.scalar(select(Inspection).where(Inspection.permit_id == permit.id))
    assert started.status == "draft" and started.weather_status == "pending"


def test_a_silent_weather_server_does_not_hold_the_database_while_a_report_is_submitted(
        app, app_meteostat, permit_at, make, signed_in, quiet_workers, short_socket_timeout):
    now = utcnow()
    for year in {now.year, (now - dt.timedelta(days=1)).year}:
        app_meteostat.hang(f"/hourly/{year}/HNG9.csv.gz")
    app.config["WEATHER_DEADLINE_S"] = 1.5
    inspector = make.user("inspector")
    permit = permit_at("hung", inspectors=[inspector])
    other = make.permit()
    db.session.commit()
    browser = signed_in(inspector)
    draft = start(browser, permit, "erosion_control")  # its weather pending: the lookup hung
    form = filled(browser.get(f"/inspections/{draft.id}").text)
    asked_before = len(app_meteostat.requests)
    answer = {}

    def submit() -> None:
        with app.app_context():
            answer["response"] = browser.post(f"/inspections/{draft.id}/submit", form)

    submitting = threading.Thread(target=submit)
    submitting.start()
    deadline = time.monotonic() + 5
    while not any("/hourly/" in path for path in app_meteostat.requests[asked_before:]):
        assert time.monotonic() < deadline, (answer, app_meteostat.requests[asked_before:])
        time.sleep(0.01)
    took = _write_elsewhere(other.id)
    submitting.join(10)
    # meteostat is silent and the submit waits for it: another writer must not wait for the submit.
    assert took < 0.3
