"""The whole record of a town (or of every town) as one zip archive in open formats (issue 34).

    permits.csv, structures.csv, users.csv   in the import's own columns: they import into another install
    tables/<table>.csv                       every other kind of record, a row per record, every column
    sites.geojson, structures.geojson        the permits' sites and the structures placed on the site map
    documents/<permit>/<id>-<kind>.pdf       every frozen document, byte for byte as signed or issued
    audit/audit_chain.jsonl                  the audit log's entries, each with its link and hash
    audit/verification.txt                   `flask audit verify` of the whole chain, as it stood
    README.md                                what every file and column holds

Written a row at a time into the archive (queries read in batches), so memory does not grow with the record.
A town's admin exports their town: its permits and what hangs on them, the people named on them and its own
staff, and the audit entries about its permits. Drafts are left out (a draft is its author's alone until it is
submitted, accounts/policy.py), their audit entries too, and so are secrets (password hashes, calendar keys,
device tokens) and the stored mail (invitation links are in it). The archive of every town, the host's, holds
the whole audit chain, drafts' entries with the rest, so that it can be checked end to end.
"""
from __future__ import annotations

import csv
import datetime as dt
import decimal
import io
import json
import re
import shutil
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

from sqlalchemy import Enum, Select, or_, select
from sqlalchemy.orm import selectinload

from inspect_app.blobs import files
from inspect_app.accounts.models import User
from inspect_app.accounts.policy import acts_for_all_towns, hidden_draft_parts
from inspect_app.audit import chain
from inspect_app.audit import services as audit
from inspect_app.audit.models import AuditEntry
from inspect_app.documents.models import FrozenDocument
from inspect_app.documents.services import AlteredDocument
from inspect_app.extensions import db
from inspect_app.permits.models import Jurisdiction, Permit, PermitAssignment, StormwaterStructure
from inspect_app.transfer.columns import EXPORT_ONLY, PERMIT_COLUMNS, STRUCTURE_COLUMNS, USER_COLUMNS, Column
from inspect_app.transfer.meanings import meaning
from inspect_app.transfer.permits import CAPACITIES, PERMIT_FIELDS, STRUCTURE_FIELDS
from inspect_app.types import canonical_json, local, utcnow

READ_BATCH = 1000
# Tables that are not the town's record: derived (the schedule's rows, stored again from the record), caches
# (weather), machinery (sync, idempotency, holidays, the sign-in counters, whose keys name people and
# addresses of every town), the stored mail, and the files' own index.
NOT_RECORDS = frozenset({
    "holiday_years", "sync_cursors", "sync_outbox", "sync_devices", "sync_operations", "sync_conflicts",
    "weather_observations", "weather_station_areas", "permit_stations", "permit_obligations",
    "permit_schedule_problems", "idempotent_requests", "outbound_emails", "om_reminders", "blobs", "blob_uploads",
    "rate_limit_counters",
    "audit_entries", "permits", "stormwater_structures", "users", "jurisdictions",
})
SECRET_COLUMNS = frozenset({"password_hash", "calendar_key"})
# Records with no permit_id of their own: how they reach one (their parent table and the column naming it).
PARENTS = {
    "area_status_events": ("disturbed_areas", "area_id"),
    "checklist_answers": ("inspections", "inspection_id"),
    "pipe_videos": ("inspections", "inspection_id"),
    "stop_work_findings": ("stop_work_orders", "order_id"),
    "schedule_amendment_signatures": ("schedule_amendments", "amendment_id"),
}
PERMIT_EXPORT = [c for c in PERMIT_COLUMNS if c != "structures"] + ["id", "status", "created_at"]
STRUCTURE_EXPORT = list(STRUCTURE_COLUMNS) + ["id"]
USER_EXPORT = list(USER_COLUMNS) + ["id", "enabled", "created_at"]


@dataclass(frozen=True)
class Scope:
    """Whose record: one town's (its id), or every town's (None)."""

    town_id: str | None

    @classmethod
    def of(cls, actor, town: Jurisdiction | None = None) -> Scope:
        """The admin `actor`'s town (the command: `town`, or every town)."""
        if actor is not None and not acts_for_all_towns(actor):
            return cls(actor.jurisdiction_id)
        return cls(town.id if town is not None else None)

    def permits(self) -> Select:
        query = select(Permit.id)
        return query if self.town_id is None else query.where(Permit.jurisdiction_id == self.town_id)

    def users(self) -> Select:
        if self.town_id is None:
            return select(User.id)
        permits = self.permits()
        return select(User.id).where(or_(
            (User.role.in_(("agent", "admin"))) & (User.jurisdiction_id == self.town_id),
            User.id.in_(select(Permit.owner_id).where(Permit.id.in_(permits))),
            User.id.in_(select(PermitAssignment.user_id).where(PermitAssignment.permit_id.in_(permits)))))


def text(value) -> str:
    """A value as a cell: dates ISO, yes/no, decimals exact, floats as Python writes them (they read back the
    same), None empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dt.datetime):
        return (value if value.tzinfo else value.replace(tzinfo=dt.UTC)).astimezone(dt.UTC).isoformat()
    if isinstance(value, (dt.date, decimal.Decimal)):
        return str(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    return str(value)


class _Archive:
    def __init__(self, target: BinaryIO) -> None:
        self.zip = zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True)
        self.counts: dict[str, int] = {}

    def csv(self, name: str, header: list[str], rows: Iterable[list]) -> None:
        with self.zip.open(name, "w", force_zip64=True) as raw:
            out = io.TextIOWrapper(raw, encoding="utf-8", newline="")
            writer = csv.writer(out)
            writer.writerow(header)
            count = 0
            for row in rows:
                writer.writerow([text(v) for v in row])
                count += 1
            out.flush()
            out.detach()
        self.counts[name] = count

    def lines(self, name: str, lines: Iterable[str]) -> None:
        with self.zip.open(name, "w", force_zip64=True) as raw:
            count = 0
            for line in lines:
                raw.write(line.encode("utf-8"))
                count += 1
        self.counts[name] = count

    def text(self, name: str, body: str) -> None:
        self.zip.writestr(name, body)


def write_archive(target: BinaryIO, scope: Scope) -> dict[str, int]:
    """Write the archive of `scope`'s record to `target`; returns the rows (or files) written per file."""
    archive = _Archive(target)
    try:
        archive.csv("permits.csv", PERMIT_EXPORT, _permit_rows(scope))
        archive.csv("structures.csv", STRUCTURE_EXPORT, _structure_rows(scope))
        archive.csv("users.csv", USER_EXPORT, _user_rows(scope))
        tables = _record_tables()
        for table in tables:
            columns = [c for c in table.columns if c.name not in SECRET_COLUMNS]
            archive.csv(f"tables/{table.name}.csv", [c.name for c in columns], _table_rows(scope, table, columns))
        archive.lines("sites.geojson", _geojson(_site_features(scope)))
        archive.lines("structures.geojson", _geojson(_structure_features(scope)))
        archive.counts["documents"], left_out = _documents(archive, scope)
        archive.lines("audit/audit_chain.jsonl", _audit_lines(scope))
        archive.text("audit/verification.txt",
                     _verification(scope, archive.counts["audit/audit_chain.jsonl"], left_out))
        archive.text("README.md", readme(scope, tables, archive.counts))
    finally:
        archive.zip.close()
    return archive.counts


def _streamed(query):
    return db.session.execute(query.execution_options(yield_per=READ_BATCH))


def _permit_rows(scope: Scope) -> Iterator[list]:
    query = (select(Permit).where(Permit.id.in_(scope.permits())).order_by(Permit.jurisdiction_id, Permit.number)
             .options(selectinload(Permit.assignments).selectinload(PermitAssignment.user),
                      selectinload(Permit.owner)))
    for permit in _streamed(query).scalars():
        values = {"town": permit.jurisdiction.profile_key, "owner_email": permit.owner.email if permit.owner else None,
                  "id": permit.id, "status": permit.status, "created_at": permit.created_at}
        for column, name in PERMIT_FIELDS.items():
            values[column] = getattr(permit, name, None)
        started = local(permit.construction_started_at)  # its time (§380-2), as the import reads it back
        values["construction_started_time"] = started.strftime("%H:%M") if started else None
        for column, capacity in CAPACITIES.items():
            values[column] = "; ".join(sorted(a.user.email for a in permit.assignments if a.capacity == capacity))
        yield [values.get(column) for column in PERMIT_EXPORT]
        db.session.expunge(permit)


def _structure_rows(scope: Scope) -> Iterator[list]:
    query = (select(StormwaterStructure, Permit.number, Jurisdiction.profile_key)
             .join(Permit, Permit.id == StormwaterStructure.permit_id)
             .join(Jurisdiction, Jurisdiction.id == Permit.jurisdiction_id)
             .where(Permit.id.in_(scope.permits()))
             .order_by(Jurisdiction.profile_key, Permit.number, StormwaterStructure.name))
    for structure, number, town in _streamed(query):
        values = {"town": town, "permit_number": number, "id": structure.id,
                  "latitude": structure.latitude, "longitude": structure.longitude}
        for column, name in STRUCTURE_FIELDS.items():
            values[column] = getattr(structure, name)
        yield [values.get(column) for column in STRUCTURE_EXPORT]


def _user_rows(scope: Scope) -> Iterator[list]:
    query = (select(User, Jurisdiction.profile_key).outerjoin(Jurisdiction, Jurisdiction.id == User.jurisdiction_id)
             .where(User.id.in_(scope.users())).order_by(User.email))
    for user, town in _streamed(query):
        values = {column: getattr(user, column) for column in USER_COLUMNS if column != "town"}
        values.update(town=town, id=user.id, enabled=user.is_enabled, created_at=user.created_at)
        yield [values.get(column) for column in USER_EXPORT]


def _record_tables() -> list:
    return [t for t in db.metadata.sorted_tables if t.name not in NOT_RECORDS]


def _in_scope(scope: Scope, table, hidden: dict) -> list:
    """The conditions that keep `table`'s rows to the scope's permits and out of anyone's draft."""
    tables = db.metadata.tables
    conditions = []
    if "permit_id" in table.c:
        if scope.town_id is not None:
            conditions.append(table.c.permit_id.in_(scope.permits()))
    elif table.name in PARENTS:
        parent_name, column = PARENTS[table.name]
        parent = tables[parent_name]
        parents = select(parent.c.id).where(*_in_scope(scope, parent, hidden))
        conditions.append(table.c[column].in_(parents))
    if table.name in hidden:
        conditions.append(table.c.id.not_in(hidden[table.name]))
    if "inspection_id" in table.c and table.name != "inspections":
        drafts = hidden["inspections"]
        conditions.append(or_(table.c.inspection_id.is_(None), table.c.inspection_id.not_in(drafts)))
    return conditions


def _table_rows(scope: Scope, table, columns) -> Iterator[list]:
    key = list(table.primary_key.columns)
    query = select(*columns).where(*_in_scope(scope, table, hidden_draft_parts())).order_by(*key)
    for row in _streamed(query):
        yield list(row)


def _geojson(features: Iterator[dict]) -> Iterator[str]:
    yield '{"type": "FeatureCollection", "features": [\n'
    first = True
    for feature in features:
        yield ("" if first else ",\n") + json.dumps(feature, ensure_ascii=False, default=text)
        first = False
    yield "\n]}\n"


def _point(longitude: float, latitude: float) -> dict:
    return {"type": "Point", "coordinates": [longitude, latitude]}


def _site_features(scope: Scope) -> Iterator[dict]:
    query = (select(Permit.id, Permit.number, Jurisdiction.profile_key, Permit.site_address, Permit.parcel_id,
                    Permit.status, Permit.owner_name, Permit.issued_on, Permit.disturbed_acres, Permit.latitude,
                    Permit.longitude)
             .join(Jurisdiction, Jurisdiction.id == Permit.jurisdiction_id)
             .where(Permit.id.in_(scope.permits())).order_by(Jurisdiction.profile_key, Permit.number))
    for row in _streamed(query):
        properties = {"permit_id": row.id, "permit_number": row.number, "town": row.profile_key,
                      "site_address": row.site_address, "parcel_id": row.parcel_id, "status": row.status,
                      "owner_name": row.owner_name, "issued_on": row.issued_on,
                      "disturbed_acres": row.disturbed_acres}
        yield {"type": "Feature", "id": row.id, "geometry": _point(row.longitude, row.latitude),
               "properties": properties}


def _structure_features(scope: Scope) -> Iterator[dict]:
    query = (select(StormwaterStructure, Permit.number).join(Permit, Permit.id == StormwaterStructure.permit_id)
             .where(Permit.id.in_(scope.permits()), StormwaterStructure.latitude.is_not(None))
             .order_by(Permit.number, StormwaterStructure.name))
    for structure, number in _streamed(query):
        properties = {"structure_id": structure.id, "permit_id": structure.permit_id, "permit_number": number,
                      "name": structure.name, "kind": structure.kind, "underground": structure.is_underground}
        yield {"type": "Feature", "id": structure.id,
               "geometry": _point(structure.longitude, structure.latitude), "properties": properties}


def _file_part(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", value).strip("._") or "permit"


def _documents(archive: _Archive, scope: Scope) -> tuple[int, list[str]]:
    """Every frozen PDF of the scope's permits, byte for byte as frozen; and the documents left out, each with
    why: a stored file gone, or changed since (it no longer hashes to the SHA-256 the document was frozen with),
    is not the signed PDF, and the archive must not pass it off as one (`documents.services.pdf_bytes` refuses
    to serve it too). Each file is hashed before it is copied (blob files are never rewritten in place)."""
    query = (select(FrozenDocument.id, FrozenDocument.kind, FrozenDocument.pdf_sha256, Permit.number)
             .join(Permit, Permit.id == FrozenDocument.permit_id).where(Permit.id.in_(scope.permits()))
             .order_by(Permit.number, FrozenDocument.frozen_at, FrozenDocument.id))
    store = files.blob_store()
    count, left_out = 0, []
    for row in _streamed(query):
        name = f"documents/{_file_part(row.number)}/{row.id}-{row.kind}.pdf"
        found = store.stored_sha256(row.pdf_sha256)
        if found != row.pdf_sha256:
            left_out.append(f"{name}: {AlteredDocument(row, found)}")
            continue
        with store.open(row.pdf_sha256) as source, archive.zip.open(name, "w", force_zip64=True) as target:
            shutil.copyfileobj(source, target)
        count += 1
    return count, left_out


def _audit_lines(scope: Scope) -> Iterator[str]:
    """One JSON object per entry, in commit order: the columns its hash covers, its link and its hash."""
    table = AuditEntry.__table__
    where = table.c.commit_seq.is_not(None)
    if scope.town_id is not None:
        where = where & table.c.permit_id.in_(scope.permits()) & ~_about_drafts(table)
    query = select(*(table.c[n] for n in (*chain.CONTENT_COLUMNS, "prev_hash", "hash"))).where(where) \
        .order_by(table.c.commit_seq)
    for row in _streamed(query).mappings():
        yield canonical_json(dict(row)).decode("utf-8") + "\n"


def _about_drafts(entries):
    """SQL: the audit entries about a part of a draft report, a draft's or one removed from a draft (a draft
    discarded, a finding taken off it): every part of a draft table that is not a row seen by all."""
    hidden = hidden_draft_parts()
    about = []
    for name, ids in hidden.items():
        rows = db.metadata.tables[name]
        kept = select(rows.c.id).where(rows.c.id.not_in(ids))
        about.append((entries.c.entity == name) & entries.c.entity_id.not_in(kept))
    return or_(*about)


def _verification(scope: Scope, exported: int, left_out: list[str]) -> str:
    walk = audit.verify_chain()
    records = audit.verify_records()
    lines = [f"Verified at {utcnow().isoformat()} by walking the whole audit chain (every town), as "
             "`flask audit verify` does."]
    if walk.broken is None:
        lines.append(f"Chain: {walk.verified} entries verified; head: entry {walk.head_commit_seq or 0} "
                     f"hash {walk.head_hash}.")
    else:
        lines.append(f"Chain: BROKEN at {walk.broken} ({walk.verified} entries before it verified).")
    if not records.problems:
        lines.append(f"Records: {records.checked} signed or issued records hold their latest chained state.")
    else:
        lines.append(f"Records: {len(records.problems)} of {records.checked} do NOT hold their latest chained state:")
        lines.extend(f"- {problem}" for problem in records.problems)
    if left_out:
        lines.append(f"Documents: {len(left_out)} frozen PDF(s) left out of this archive, their stored file not the "
                     "one frozen (altered or lost outside the app):")
        lines.extend(f"- {problem}" for problem in left_out)
    if scope.town_id is None:
        lines.append(f"This archive holds the whole chain ({exported} entries): each entry's link is the hash of the "
                     "one before it, so it can be checked end to end (README.md says how).")
    else:
        lines.append(f"This archive holds the {exported} entries about this town's permits. Each entry's hash can be "
                     "checked from its own content and link (README.md says how); entries of other towns, and "
                     "those about accounts, lie between them in the chain and are not in this archive.")
    return "\n".join(lines) + "\n"


_FILES = {"permits": "permits.csv", "users": "users.csv", "stormwater_structures": "structures.csv"}


def _column_note(column) -> str:
    parts = [str(column.type).lower() if not isinstance(column.type, Enum) else "text, one of "
             + ", ".join(column.type.enums)]
    for key in column.foreign_keys:
        target = key.column.table.name
        parts.append(f"the id of a row of {_FILES.get(target, f'tables/{target}.csv')}")
    parts.append("may be empty" if column.nullable else "always given")
    return "; ".join(parts)


def readme(scope: Scope, tables, counts: dict[str, int]) -> str:
    """README.md: every file, and every column of every CSV."""
    def described(names: list[str], declared: dict[str, Column]) -> list[str]:
        columns = [declared.get(name) or EXPORT_ONLY[name] for name in names]
        return ["| column | what it holds |", "| --- | --- |", *(f"| `{c.name}` | {c.meaning} |" for c in columns)]

    town = "every town" if scope.town_id is None else db.session.get(Jurisdiction, scope.town_id).name
    lines = [
        "# Stormwater inspection record: export", "",
        f"The record of {town}, exported {utcnow().isoformat()}. Text files are UTF-8; CSV files have a header "
        "row; times are UTC (ISO 8601), days YYYY-MM-DD, yes/no columns `yes` or `no`, an empty cell is no value.",
        "Drafts (a report not yet submitted, with its parts) are not in it; nor are passwords, calendar keys, "
        "device tokens or the stored mail.", "",
        "## Files", "",
        "| file | what it holds | rows |", "| --- | --- | --- |",
        f"| `permits.csv` | the permits, in the columns `flask import permits` reads | {counts.get('permits.csv', 0)} |",
        f"| `structures.csv` | the stormwater structures, in the columns of a structures file | "
        f"{counts.get('structures.csv', 0)} |",
        f"| `users.csv` | the people, in the columns `flask import users` reads | {counts.get('users.csv', 0)} |",
    ]
    for table in tables:
        name = f"tables/{table.name}.csv"
        lines.append(f"| `{name}` | {_table_doc(table)} | {counts.get(name, 0)} |")
    lines += [
        f"| `sites.geojson` | each permit's site as a GeoJSON point (longitude, latitude; WGS 84) | "
        f"{counts.get('sites.geojson', 2) - 2} |",
        f"| `structures.geojson` | each structure placed on its site map, as a point | "
        f"{counts.get('structures.geojson', 2) - 2} |",
        f"| `documents/<permit>/<id>-<kind>.pdf` | every frozen document (reports, orders, certificates, O&M "
        f"certifications), byte for byte as signed or issued (each checked against its SHA-256; one whose stored "
        f"file no longer matches is left out, and `audit/verification.txt` names it); `tables/documents.csv` says "
        f"what each is | "
        f"{counts.get('documents', 0)} |",
        f"| `audit/audit_chain.jsonl` | the audit log, an entry a line, in commit order | "
        f"{counts.get('audit/audit_chain.jsonl', 0)} |",
        "| `audit/verification.txt` | the verification of the whole chain when exported | |", "",
        "## Importing into another install", "",
        "    flask import users users.csv --apply", "    flask import permits permits.csv --structures structures.csv --apply", "",
        "gives the same permits, parties and structures (the status follows from the facts; inspections and the "
        "other records are kept here as the town's record, not imported).", "",
        "## permits.csv", "", *described(PERMIT_EXPORT, PERMIT_COLUMNS), "",
        "## structures.csv", "", *described(STRUCTURE_EXPORT, STRUCTURE_COLUMNS), "",
        "## users.csv", "", *described(USER_EXPORT, USER_COLUMNS), "",
        "## The audit chain", "",
        "Each line of `audit/audit_chain.jsonl` is one entry: `seq` (the order written), `commit_seq` (the order "
        "committed, which the chain follows), `at` (UTC), `actor_id` (a user's id; empty for the system or a "
        "command), `action`, `entity` (the table), `entity_id`, `permit_id`, `before` and `after` (the record's "
        "columns before and after the change), `prev_hash` and `hash`.",
        "`hash` is the SHA-256 (hex) of `prev_hash` (64 hex digits; 64 zeros for the first entry) followed by the "
        "entry's other columns (all but `prev_hash` and `hash`) as JSON with sorted keys, no spaces, UTF-8. In "
        "Python:", "",
        "    import hashlib, json",
        "    prev = '0' * 64",
        "    for line in open('audit/audit_chain.jsonl', encoding='utf-8'):",
        "        entry = json.loads(line)",
        "        link, digest = entry.pop('prev_hash'), entry.pop('hash')",
        "        content = json.dumps(entry, sort_keys=True, separators=(',', ':'), ensure_ascii=False)",
        "        assert hashlib.sha256((link + content).encode()).hexdigest() == digest",
        "        assert link == prev  # only in an archive of every town: a town's holds its own entries",
        "        prev = digest", "",
        "## tables/", "",
        "Every column of every table, as stored. Ids are UUIDs; a column naming another record holds its id.", "",
    ]
    for table in tables:
        lines += [f"### tables/{table.name}.csv", "", _table_doc(table), "",
                  "| column | what it holds | stored as |", "| --- | --- | --- |"]
        lines += [f"| `{c.name}` | {meaning(table.name, c.name)} | {_column_note(c)} |"
                  for c in table.columns if c.name not in SECRET_COLUMNS]
        lines.append("")
    return "\n".join(lines)


def _table_doc(table) -> str:
    for mapper in db.Model.registry.mappers:
        if mapper.local_table is table and mapper.class_.__doc__:
            return " ".join(mapper.class_.__doc__.strip().split("\n\n")[0].split())
    return table.name.replace("_", " ")
