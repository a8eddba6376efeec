"""The policy knows other domains' records only by what each model declares (accounts/records.py): the parts of
a draft report, and the columns that name a stored file. A table or column added without its declaration would
show someone's draft, or hide a file from those who see its record: these tests fail on it."""
from __future__ import annotations

import datetime as dt

from inspect_app.accounts import records
from inspect_app.accounts.policy import hidden_draft_parts
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.types import utcnow
from tests.builders import signature_data_url
from tests.inspections.report_helpers import filled, start

# Columns ending in "sha256" that name no stored file.
NOT_FILES = {
    ("sync_devices", "token_sha256"): "the hash of a device's token, kept instead of the token",
    ("blob_uploads", "sha256"): "the name of an upload not completed yet: its bytes are no stored file",
    ("documents", "record_sha256"): "the hash of the record a document froze",
    ("inspections", "record_sha256"): "the hash of the submitted report's record",
    ("inspections", "parts_sha256"): "the hash of the submitted report's parts kept in rows of their own",
}
# Tables that point at a report or a finding without being part of a draft.
NOT_DRAFT_PARTS = {
    "inspections": "an amendment points at the report it amends; the report is the root of its own parts",
    "area_status_events": "written when a report is submitted, never while it is a draft",
    "final_submissions": "cites a submitted final inspection",
    "pipe_videos": "shown only on its report and its PDF, which the draft's rule already hides",
    "stop_work_orders": "an order cites submitted reports",
    "notices_of_violation": "a notice cites a submitted report",
    "stop_work_findings": "an order cites the findings of submitted reports",
}


def test_every_column_naming_a_stored_file_is_declared(app):
    declared = {(column.class_.__tablename__, column.key) for column in records.blob_columns()}
    hashes = {(table.name, column.name) for table in db.metadata.sorted_tables for column in table.columns
              if column.name.endswith("sha256") and table.name != "blobs"}
    assert hashes - set(NOT_FILES) == declared


def test_every_table_pointing_at_a_report_or_a_finding_is_a_draft_part_or_says_why_not(app):
    pointing = {table.name for table in db.metadata.sorted_tables for column in table.columns
                for key in column.foreign_keys if key.column.table.name in ("inspections", "findings")}
    assert records.draft_tables() == pointing - set(NOT_DRAFT_PARTS) | {"inspections"}
    assert set(hidden_draft_parts()) == records.draft_tables()


def test_the_permittees_signature_is_seen_by_who_sees_the_report(make, signed_in):
    """A walk-through signed by the permittee's signatory too: another inspector of the permit, who sees the
    submitted report, sees both signatures' files; an inspector of another permit learns nothing of them."""
    inspector, colleague, stranger = (make.user("inspector", town=None) for _ in range(3))
    permit = make.permit("cgp_baseline", inspectors=[inspector, colleague], npdes_id="MAR12A778",
                         construction_started_on=(utcnow() - dt.timedelta(days=3)).date())
    make.permit("cgp_baseline", inspectors=[stranger])
    client = signed_in(inspector)
    inspection = start(client, permit, "erosion_control")
    page = client.get(f"/inspections/{inspection.id}").text
    sent = client.post(f"/inspections/{inspection.id}/submit", filled(
        page, permittee_signer_name="Morgan Lee", permittee_signer_title="President",
        permittee_signature=signature_data_url(4)))
    assert sent.status_code == 303, sent.text[:2000]
    db.session.expire_all()
    report = db.session.get(Inspection, inspection.id)
    files = [report.signature_sha256, report.permittee_signature_sha256]
    assert all(files)

    fellow = signed_in(colleague)
    for sha in files:
        answer = fellow.get(f"/sync/blobs/{sha}")
        assert answer.status_code == 200 and answer.json["complete"] is True
    other = signed_in(stranger)
    assert [other.get(f"/sync/blobs/{sha}").status_code for sha in files] == [404, 404]
