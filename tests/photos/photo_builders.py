"""Builders for photo tests: a camera's JPEG (with EXIF orientation, GPS and time), and the records photos go to."""
from __future__ import annotations

import datetime as dt
from pathlib import Path

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection
from tests.builders import SITE_GPS, jpeg


def make_jpeg(size: tuple[int, int] = (1200, 900), *, orientation: int | None = 6,
              taken: str | None = "2026:06:03 09:30:12", gps=SITE_GPS, shade: int = 0) -> bytes:
    """A photo as a tablet camera takes it on the site: turned (EXIF orientation), with its time and GPS."""
    return jpeg(shade, size, orientation=orientation, taken=taken, gps=gps)


def blob_files(app) -> set[Path]:
    """Every file under the blob folder, temporary and partial ones included."""
    root = Path(app.config["BLOB_ROOT"])
    return {path for path in root.rglob("*") if path.is_file()} if root.exists() else set()


def make_inspection(permit, inspector, *, status: str = "draft", type: str = "erosion_control") -> Inspection:
    """An inspection row made directly (the inspections UI is built elsewhere)."""
    now = dt.datetime(2026, 6, 3, 13, 0, tzinfo=dt.UTC)
    inspection = Inspection(
        permit_id=permit.id, type=type, status=status, performed_at=now, inspector_id=inspector.id,
        inspector_name=inspector.name, inspector_credentials=inspector.credentials,
        submitted_at=now if status == "submitted" else None,
    )
    db.session.add(inspection)
    db.session.commit()
    return inspection


def make_finding(inspection: Inspection) -> Finding:
    finding = Finding(inspection_id=inspection.id, permit_id=inspection.permit_id,
                      description="Silt fence down along the north edge", severity="major")
    db.session.add(finding)
    db.session.commit()
    return finding


def make_corrective_action(finding: Finding, status: str = "open") -> CorrectiveAction:
    now = dt.datetime(2026, 6, 3, 13, 0, tzinfo=dt.UTC)
    action = CorrectiveAction(finding_id=finding.id, permit_id=finding.permit_id, kind="significant_repair",
                              description="Re-trench and re-stake the silt fence", owner_name="Site contractor",
                              discovered_at=now, due_at=now + dt.timedelta(days=7), status=status)
    db.session.add(action)
    db.session.commit()
    return action
