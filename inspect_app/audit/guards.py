"""The final records, declared once: triggers that refuse to change them, and what `flask audit verify` checks.

The ORM already refuses to change an audit entry; these triggers make the database refuse too, whoever
connects (a psql session, a script, a bug), on PostgreSQL and SQLite alike:

- an audit entry is never deleted, and never updated once sealed in the hash chain (its commit number and
  hash are written once, at its commit, in the same transaction: `models._stamp_commit_order`);
- a submitted inspection report never changes, except its weather, which the server may fill in later
  when it was pending (SPEC *Weather*, with its own audit entry) and the record hash sealed again with it;
- an issued stop-work order keeps what it ordered; its acknowledgement and lifting are filled in once;
- notices of violation and certificates of completion never change;
- a signed O&M certification keeps what was signed; the town's review is filled in once;
- a frozen document and a surety release never change;
- a waiver as granted (§380-8) and a snowmelt discharge as recorded never change; a frozen-conditions period
  (CGP 4.4) keeps its beginning, and its end is filled in once.

None of them may be deleted. Each guard is a table, the condition on the old row that makes it final, and
the columns that may still be written with the condition under which they may; every other column is
frozen. The triggers are made from this one table for both databases, by `create_all` and the migrations.

The same table says what the hash chain holds of each final record (`RECORDS`): its chained state is
every column of its row, as the audit entry written with each change snapshots it (`services.record`),
those its guard lets the app write later included: each such write (weather filled in, an order lifted,
a certification reviewed) writes its own entry. `flask audit verify` compares each record's row with the
state its latest chained entry gives (`services.verify_records`).
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import JSON, Connection, MetaData, event, inspect

# PostgreSQL's SQLSTATE for "restrict_violation": drivers raise it as an IntegrityError, as SQLite's RAISE(ABORT).
_PG_ERRCODE = "23001"


@dataclass(frozen=True)
class Final:
    """A row is final once its `column` holds one of `values` (a guard with none is final from its insert)."""

    column: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Guard:
    """Refuse UPDATE (of frozen columns) and DELETE of rows of `table` that are final (see `Final`)."""

    table: str
    what: str  # what the row is, for the message: "a submitted inspection report"
    final: Final | None = None
    # column -> condition on OLD under which it may change
    writable: dict[str, str] = field(default_factory=dict)

    def final_sql(self, row: str) -> str:
        """The condition, in SQL on `row` (OLD in a trigger), under which a row is final."""
        if self.final is None:
            return "1 = 1"
        listed = ", ".join(f"'{value}'" for value in self.final.values)
        return f"{row}.{self.final.column} IN ({listed})"

    def is_final(self, state: Mapping[str, Any]) -> bool:
        """Whether a row's state (its columns by name, as an audit entry's snapshot has them) is final."""
        return self.final is None or state.get(self.final.column) in self.final.values


_ONCE = "OLD.{column} IS NULL"
_WEATHER = ("weather_status", "temperature_c", "conditions", "wind_kmh", "wind_direction_deg", "precip_24h_mm",
            "precip_hours", "station_id", "station_name", "station_distance_m", "weather_sources",
            "weather_attribution", "weather_fetched_at", "weather_stations", "weather_provisional")


def _once(*columns: str) -> dict[str, str]:
    return {column: _ONCE.format(column=column) for column in columns}


# The records the law relies on: a report as submitted (with its weather), orders and notices as issued and
# lifted, certificates, surety releases, certifications as signed and reviewed, their frozen documents, and the
# waivers and site conditions the schedule follows.
RECORDS = (
    Guard("inspections", "a submitted inspection report", Final("status", ("submitted",)),
          # Pending weather filled in later, then the record hash sealed again with it; the hash of its parts in
          # rows of their own is written once, at signing (after the row became final, in the same transaction).
          {**dict.fromkeys(_WEATHER, "1 = 1"), "record_sha256": "1 = 1", **_once("parts_sha256")}),
    Guard("stop_work_orders", "an issued stop-work order",
          writable=_once("acknowledged_at", "acknowledged_by_id", "lifted_by_id", "lifted_at", "lift_reason",
                         "approval_inspection_id")),
    Guard("notices_of_violation", "an issued notice of violation"),
    Guard("certificates_of_completion", "an issued certificate of completion"),
    Guard("om_certifications", "a signed O&M certification",
          writable={"status": "OLD.status = 'submitted'", **_once("reviewed_by_id", "reviewed_at", "review_note")}),
    Guard("surety_releases", "a surety release"),
    Guard("documents", "a frozen document"),
    # What stops or changes an obligation of the schedule: the authority's waiver and the site's conditions.
    Guard("waivers", "a granted waiver"),
    Guard("frozen_periods", "a recorded frozen-conditions period", writable=_once("ends_at", "ended_by_id")),
    Guard("snowmelt_discharges", "a recorded snowmelt discharge"),
)
GUARDS = (
    # Sealing happens once, in the writing transaction; after that the entry is fixed.
    Guard("audit_entries", "an audit entry", writable={"commit_seq": "OLD.hash IS NULL",
                                                       "prev_hash": "OLD.hash IS NULL",
                                                       "hash": "OLD.hash IS NULL"}),
    *RECORDS,
)


def _changed(column: str, is_json: bool, dialect: str) -> str:
    if dialect == "postgresql":
        cast = "::text" if is_json else ""  # json has no equality operator
        return f"NEW.{column}{cast} IS DISTINCT FROM OLD.{column}{cast}"
    return f"NEW.{column} IS NOT OLD.{column}"


def _update_refused(guard: Guard, metadata: MetaData, dialect: str) -> str:
    """The condition on OLD and NEW under which an UPDATE is refused."""
    table = metadata.tables[guard.table]
    changes = []
    for column in table.columns:
        changed = _changed(column.name, isinstance(column.type, JSON), dialect)
        allowed = guard.writable.get(column.name)
        changes.append(changed if allowed is None else f"({changed} AND NOT ({allowed}))")
    return f"({guard.final_sql('OLD')}) AND ({' OR '.join(changes)})"


def _message(guard: Guard, verb: str) -> str:
    return f"{guard.table}: {guard.what} is part of the record and cannot be {verb}"


def create_statements(metadata: MetaData, dialect: str) -> list[str]:
    """The DDL that makes the triggers of every guard whose table `metadata` has (an earlier migration's schema
    has not every table yet)."""
    statements = []
    for guard in GUARDS:
        if guard.table not in metadata.tables:
            continue
        refused = _update_refused(guard, metadata, dialect)
        name = f"guard_{guard.table}"
        if dialect == "postgresql":
            for verb, event_, condition, row in (("changed", "UPDATE", refused, "NEW"),
                                                 ("deleted", "DELETE", guard.final_sql("OLD"), "OLD")):
                function = f"{name}_{event_.lower()}"
                statements.append(
                    f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql AS $$\n"
                    f"BEGIN\n  IF {condition} THEN\n"
                    f"    RAISE EXCEPTION '{_message(guard, verb)}' USING ERRCODE = '{_PG_ERRCODE}';\n"
                    f"  END IF;\n  RETURN {row};\nEND $$")
                statements.append(f"CREATE TRIGGER {function} BEFORE {event_} ON {guard.table} FOR EACH ROW "
                                  f"EXECUTE FUNCTION {function}()")
        else:
            statements.append(f"CREATE TRIGGER {name}_update BEFORE UPDATE ON {guard.table} WHEN {refused} "
                              f"BEGIN SELECT RAISE(ABORT, '{_message(guard, 'changed')}'); END")
            statements.append(f"CREATE TRIGGER {name}_delete BEFORE DELETE ON {guard.table} "
                              f"WHEN {guard.final_sql('OLD')} "
                              f"BEGIN SELECT RAISE(ABORT, '{_message(guard, 'deleted')}'); END")
    return statements


def drop_statements(dialect: str, tables: Collection[str] | None = None) -> list[str]:
    """The DDL that removes the guards' triggers (and, on PostgreSQL, their functions): all, or those of `tables`."""
    statements = []
    for guard in GUARDS if tables is None else [guard for guard in GUARDS if guard.table in tables]:
        for event_ in ("update", "delete"):
            name = f"guard_{guard.table}_{event_}"
            if dialect == "postgresql":
                statements.append(f"DROP TRIGGER IF EXISTS {name} ON {guard.table}")
                statements.append(f"DROP FUNCTION IF EXISTS {name}()")
            else:
                statements.append(f"DROP TRIGGER IF EXISTS {name}")
    return statements


def create(connection: Connection, metadata: MetaData) -> None:
    """Make the guards' triggers."""
    for statement in create_statements(metadata, connection.dialect.name):
        connection.exec_driver_sql(statement)


def create_for_schema_now(connection: Connection) -> None:
    """Make the triggers for the guarded tables as the database has them now, read from it: a migration
    cannot use the models' metadata, which has the columns of later revisions too."""
    metadata = MetaData()
    present = set(inspect(connection).get_table_names())
    metadata.reflect(bind=connection, only=[guard.table for guard in GUARDS if guard.table in present])
    create(connection, metadata)


def drop(connection: Connection, tables: Collection[str] | None = None) -> None:
    """Remove the guards' triggers (of `tables` only, if given)."""
    for statement in drop_statements(connection.dialect.name, tables):
        connection.exec_driver_sql(statement)


def install(metadata: MetaData) -> None:
    """Make the triggers whenever `metadata.create_all` makes the tables (tests, a new database)."""
    if not event.contains(metadata, "after_create", _after_create):
        event.listen(metadata, "after_create", _after_create)
        event.listen(metadata, "before_drop", _before_drop)


def _after_create(metadata: MetaData, connection: Connection, **kw) -> None:
    create(connection, metadata)


def _before_drop(metadata: MetaData, connection: Connection, **kw) -> None:
    drop(connection)
