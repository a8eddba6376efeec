"""The permit page and the report page run as many SQL statements for a permit with a long history as
for a new one (as the dashboard does): a page that queries once per record slows down as the record grows,
which is how a busy town's permit page came to p95 466 ms under load."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from inspect_app.conditions.models import FrozenPeriod, SnowmeltDischarge
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, CorrectiveAction, Finding, Inspection, InspectionNotice
from inspect_app.inspections import checks
from inspect_app.inspections import services as inspections
from inspect_app.permits import services as permits
from inspect_app.permits.services import profile_of
from inspect_app.blobs.models import Blob
from inspect_app.photos.models import Photo
from inspect_app.types import utcnow
from inspect_app.waivers.models import Waiver
from tests.databases import recorded_statements

SHA = "ab" * 32


def grow(permit, inspector, n: int) -> tuple[str, str]:
    """Give the permit n of everything its pages show; returns (a submitted report, a draft report)."""
    now = utcnow()
    start = now - dt.timedelta(days=10 * n + 10)
    if db.session.get(Blob, SHA) is None:
        db.session.add(Blob(sha256=SHA, size=1, content_type="image/jpeg"))
    for k in range(n):
        area = permits.add_area(None, permit, f"Area {k}", Decimal("0.2"), since=start)
        permits.change_area_status(None, area, "activity_ceased", start + dt.timedelta(days=1))
        pipe = permits.add_structure(None, permit, name=f"Pipe {k}", kind="pipe", is_underground=True)
        permits.add_structure(None, permit, name=f"Basin {k}", kind="basin", is_underground=False)
        db.session.flush()
        db.session.add(Waiver(permit_id=permit.id, requirement="pre_bury", structure_id=pipe.id, reason=f"Seen {k}",
                              granted_on=start.date(), granted_by_id=inspector.id))
        db.session.add(FrozenPeriod(permit_id=permit.id, suspended=False, starts_at=start + dt.timedelta(days=k),
                                    ends_at=start + dt.timedelta(days=k, hours=5), note="Frozen",
                                    recorded_by_id=inspector.id, ended_by_id=inspector.id))
        db.session.add(SnowmeltDischarge(permit_id=permit.id, discharge_at=start + dt.timedelta(days=k, hours=2),
                                         snow_mm=90.0, seen_on_site=True, recorded_by_id=inspector.id))
        db.session.add(InspectionNotice(permit_id=permit.id, inspection_type="erosion_control",
                                        planned_for=now + dt.timedelta(days=2 + k), given_by_id=inspector.id))
    # n photos taken on a site-wide checklist item, on the last submitted report and on the draft (issue 31).
    site_item = next(item.key for item in profile_of(permit).inspection_type("erosion_control").checklist
                     if item.per == "site")
    shas = [f"{k:064x}" for k in range(1, n + 1)]
    for sha in shas:
        if db.session.get(Blob, sha) is None:
            db.session.add(Blob(sha256=sha, size=1, content_type="image/jpeg"))
    item_photos = {checks.fix_key(site_item, ""): shas}
    submitted = None
    for k in range(n):
        at = start + dt.timedelta(days=2 + 7 * k)
        report = Inspection(permit_id=permit.id, type="erosion_control", status="submitted", performed_at=at,
                            latitude=42.05, longitude=-72.58, location_source="permit", inspector_id=inspector.id,
                            inspector_name=inspector.name, inspector_credentials="PE", weather_status="complete",
                            evaluation="violations", signer_name=inspector.name,
                            details={"controls": []} | ({"item_photos": item_photos} if k == n - 1 else {}),
                            signer_credentials="PE", signed_at=at, submitted_at=at, created_by_id=inspector.id)
        db.session.add(report)
        db.session.flush()
        report.answers = [ChecklistAnswer(item_key=f"item{i}", answer="yes") for i in range(3)]
        finding = Finding(inspection_id=report.id, permit_id=permit.id, description=f"Silt fence down {k}",
                          is_violation=True, created_at=at)
        db.session.add(finding)
        db.session.flush()
        db.session.add(CorrectiveAction(finding_id=finding.id, permit_id=permit.id, kind="routine_maintenance",
                                        description=f"Re-stake {k}", owner_name="Contractor", discovered_at=at,
                                        due_at=at + dt.timedelta(days=7)))
        for p in range(2):
            db.session.add(Photo(permit_id=permit.id, original_sha256=SHA, display_sha256=SHA, thumb_sha256=SHA,
                                 width=10, height=10, taken_at=at, caption=f"Photo {k}.{p}", inspection_id=report.id,
                                 finding_id=finding.id if p == 0 else None, uploaded_by_id=inspector.id))
        submitted = report
    draft = inspections.start_inspection(inspector, permit, "erosion_control", fetch_weather=False)
    draft.details = {**draft.details, "item_photos": item_photos}
    db.session.flush()
    for report in (submitted, draft):
        for sha in shas:
            db.session.add(Photo(permit_id=permit.id, original_sha256=sha, display_sha256=SHA, thumb_sha256=SHA,
                                 width=10, height=10, caption=f"Item photo {sha[-2:]}", inspection_id=report.id,
                                 uploaded_by_id=inspector.id))
    db.session.commit()
    return submitted.id, draft.id


@pytest.fixture
def count_statements(app):
    """`count_statements(client, path)`: the SQL statements a GET of `path` runs (it must answer 200)."""

    def count(client, path: str) -> int:
        with recorded_statements() as statements:
            answer = client.get(path)
        assert answer.status_code == 200, (path, answer.status_code)
        return len(statements)

    return count


# At most this many statements a page, by viewer: what the pages take today, so one that grows is seen.
# The permit page reads its open obligations once (for "What to do now" and the site map), and the frozen-conditions
# periods, the snowmelt discharges, the waivers and the 24-hour notices (one each); the report pages read the photos
# taken on checklist items, and the report's other photos (issue 31; a draft's too, or a photo saved with it looks
# lost), and the report with its permit and the permit's inspectors in one statement. The tables a page finds empty in one statement (held_rows) it does not
# read.
MOST = {("inspector", "permit page"): 13, ("inspector", "submitted report"): 11, ("inspector", "draft report"): 12,
        ("agent", "permit page"): 15, ("agent", "submitted report"): 11}


@pytest.mark.parametrize("role", ["inspector", "agent"])
def test_permit_and_report_pages_do_not_query_per_record(make, signed_in, count_statements, role):
    inspector = make.user("inspector")
    viewer = inspector if role == "inspector" else make.user("agent")
    small, big = make.permit(inspectors=[inspector]), make.permit(inspectors=[inspector])
    small_report, small_draft = grow(small, inspector, 2)
    big_report, big_draft = grow(big, inspector, 12)
    client = signed_in(viewer)
    pages = {"permit page": ("/permits/{}", small.id, big.id),
             "submitted report": ("/inspections/{}", small_report, big_report)}
    if role == "inspector":
        pages["draft report"] = ("/inspections/{}", small_draft, big_draft)
    for page, (path, few, many) in pages.items():
        count_statements(client, path.format(few))  # the first request also loads the session's user
        counts = (count_statements(client, path.format(few)), count_statements(client, path.format(many)))
        assert counts[0] == counts[1], f"{page}: {counts[0]} statements with 2 of everything, {counts[1]} with 12"
        assert counts[1] <= MOST[role, page], f"{page}: {counts[1]} statements, more than {MOST[role, page]}"


def test_a_permit_page_does_not_read_the_tables_the_permit_has_no_row_in(make, signed_in, count_statements):
    """A new permit has no stop-work order, waiver, frozen period, certificate...: one statement finds which of
    those tables hold a row of it, instead of one statement each; the permit with one of each reads them."""
    inspector = make.user("inspector")
    bare, grown = make.permit(inspectors=[inspector]), make.permit(inspectors=[inspector])
    grow(grown, inspector, 1)
    client = signed_in(inspector)
    count_statements(client, f"/permits/{bare.id}")  # the first request also loads the session's user
    assert count_statements(client, f"/permits/{bare.id}") == 9
    # Its frozen periods, snowmelt discharges, waivers and 24-hour notices: four statements more.
    assert count_statements(client, f"/permits/{grown.id}") == 13
