"""Records for the dashboard tests, made with the factories and the models directly."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import event

from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from inspect_app.permits import services as permits
from inspect_app.types import LOCAL_TZ, utcnow
from inspect_app.weather.models import StormEvent


class Record:
    """Adds history to a permit: inspections, corrective actions, area events, storms, stop-work orders."""

    def __init__(self) -> None:
        self.now = utcnow()

    def ago(self, days: float = 0, hours: float = 0) -> dt.datetime:
        return self.now - dt.timedelta(days=days, hours=hours)

    def local_day(self, days_ago: int) -> dt.date:
        return (self.now.astimezone(LOCAL_TZ) - dt.timedelta(days=days_ago)).date()

    def inspection(self, permit, kind: str = "erosion_control", at: dt.datetime | None = None,
                   status: str = "submitted", amends: Inspection | None = None) -> Inspection:
        at = at or self.ago(hours=1)
        inspection = Inspection(permit_id=permit.id, type=kind, status=status, performed_at=at,
                                inspector_name="Pat Engineer", inspector_credentials="P.E. (MA) No. 40001",
                                submitted_at=at if status == "submitted" else None,
                                amends_id=amends.id if amends else None)
        db.session.add(inspection)
        db.session.commit()
        return inspection

    def corrective_action(self, permit, kind: str = "significant_repair", found: dt.datetime | None = None,
                          done: dt.datetime | None = None) -> CorrectiveAction:
        found = found or self.ago(days=1)
        inspection = self.inspection(permit, at=found)
        finding = Finding(inspection_id=inspection.id, permit_id=permit.id, description="Silt fence undermined")
        db.session.add(finding)
        db.session.flush()
        action = CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind=kind, description="Re-trench",
                                  owner_name="Site contractor", discovered_at=found,
                                  due_at=found + dt.timedelta(days=7), completed_at=done,
                                  status="completed" if done else "open")
        db.session.add(action)
        db.session.commit()
        return action

    def area(self, permit, name: str, disturbed: dt.datetime, *events: tuple[str, dt.datetime]):
        area = permits.add_area(None, permit, name, Decimal("0.5"), since=disturbed)
        for status, at in events:
            permits.change_area_status(None, area, status, at)
        db.session.commit()
        return area

    def storm(self, permit, days_ago: int, depth_mm: float = 12.0) -> StormEvent:
        """A storm as the sweep finds it: rain from 6 hours before, reaching the threshold an hour ago."""
        reached = self.ago(days=days_ago, hours=1)
        storm = StormEvent(permit_id=permit.id, day=reached.astimezone(LOCAL_TZ).date(), depth_mm=depth_mm,
                           started_at=reached - dt.timedelta(hours=5), reached_at=reached, ended_at=reached)
        db.session.add(storm)
        db.session.commit()
        return storm

    def stop_work(self, permit, agent, at: dt.datetime) -> StopWorkOrder:
        order = StopWorkOrder(permit_id=permit.id, reason="Sediment in the street", issued_by_id=agent.id,
                              issued_at=at)
        db.session.add(order)
        db.session.commit()
        return order


@pytest.fixture
def record(app) -> Record:
    return Record()


@pytest.fixture
def count_queries(app):
    """`with count_queries() as statements:` collects every SQL statement run inside the block."""
    from contextlib import contextmanager

    @contextmanager
    def counting():
        statements: list[str] = []

        def count(conn, cursor, statement, parameters, context, executemany):
            statements.append(statement)

        event.listen(db.engine, "before_cursor_execute", count)
        try:
            yield statements
        finally:
            event.remove(db.engine, "before_cursor_execute", count)

    return counting


class TileServer:
    """A map tile server on 127.0.0.1 (a free port): every /tiles/<z>/<x>/<y>.png is one grey PNG."""

    def __init__(self) -> None:
        import io
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        from PIL import Image

        out = io.BytesIO()
        Image.new("RGB", (256, 256), (200, 210, 190)).save(out, "PNG")
        png, served = out.getvalue(), []
        self.served = served

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                if not self.path.startswith("/tiles/"):
                    self.send_error(404)
                    return
                served.append(self.path)
                self.send_response(200)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(png)))
                self.end_headers()
                self.wfile.write(png)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_port}/tiles/{{z}}/{{x}}/{{y}}.png"

    def stop(self) -> None:
        self.server.shutdown()
        self.thread.join(timeout=5)
        self.server.server_close()


@pytest.fixture
def tile_server(app):
    """A tile server on 127.0.0.1 that the app's maps use (MAP_TILE_URL), with its own attribution."""
    tiles = TileServer()
    app.config.update(MAP_TILE_URL=tiles.url, MAP_TILE_ATTRIBUTION="Test tiles")
    try:
        yield tiles
    finally:
        tiles.stop()
