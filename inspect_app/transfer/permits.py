"""Importing a town's permits, their parties and structures from a spreadsheet (issue 34).

A dry run reads the whole file and says, row by row, what is wrong (row, column, message) and what each good
row would do: create a permit, update the columns named, or change nothing. Applied, the same reading writes
as it goes, and the caller commits only if no row had a problem (one transaction: all or nothing).

Choices:
- Each row is checked by the permit's own form (`PermitForm`) and each structure by `StructureForm`, fed the
  row's cells: the rules and messages of the form a person fills in hold for the file too. Beyond the form: a
  site in Massachusetts, a permit number once per file, the owner's and inspectors' accounts must exist.
- A permit already recorded in the town with the row's number is updated, never made twice; its structures
  are matched by name. A cell left empty, or a column the file does not have, leaves what is recorded as it
  is: an import adds and corrects, it never clears a value, unlinks an owner or unassigns an inspector.
- The status is not imported: it follows from the facts (`permits.services.settle_status`), and the records
  that change it (orders, certificates) are made in the app.
- Writing: the services (`create_permit`, `add_structure`, `assign`) flush once per record, which measured
  7-10 ms a permit here: 50,000 rows would take about eight minutes. So the import writes the same records
  with the same rules a batch at a time (`BATCH` rows), and records each in the audit log with the services'
  own actions (`permit.create`, `permit.update`, `structure.create`, `structure.update`, `permit.assign`).
  Permits it updates are changed as objects and flushed (`audit.record_flushed`); permits it makes, with
  their structures and inspectors, are written as rows, one INSERT of many rows per table, and recorded from
  those rows (`audit.record_inserted`: the entry a flushed object would get). The status comes from
  `settle_status`; the permits' schedule is stored again at commit (schedule/obligations.py), as for any
  change.
- Memory stays bounded whatever the file's length: rows are read one at a time, a batch of records is held,
  and what is kept across the file is a key per permit (the numbers seen, and the ids of the town's permits).
"""
from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import selectinload
from werkzeug.datastructures import MultiDict

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import people_to_choose
from inspect_app.audit import services as audit
from inspect_app.extensions import db
from inspect_app.geo import MASSACHUSETTS_LATITUDES, MASSACHUSETTS_LONGITUDES
from inspect_app.permits.forms import CGP_CHOICES, PermitForm, StructureForm
from inspect_app.permits.models import CGP_SCHEDULES, STRUCTURE_KINDS, Permit, PermitAssignment, StormwaterStructure
from inspect_app.permits.services import settle_status, start_time_stale
from inspect_app.schedule import obligations
from inspect_app.transfer.columns import EXPORT_ONLY, PERMIT_COLUMNS, STRUCTURE_COLUMNS
from inspect_app.transfer.rows import (
    CREATE, UNCHANGED, UPDATE, Notice, Outcome, Problem, Progress, Towns, cell_problems, parse_day, parse_time,
    parse_yes_no,
)
from inspect_app.transfer.sheets import Row, Sheet
from inspect_app.types import LOCAL_TZ

BATCH = 500
PROGRESS_EVERY = 1000

# column -> the permit form's field it feeds
PERMIT_FIELDS = {
    "permit_number": "number", "site_address": "site_address", "parcel_id": "parcel_id", "latitude": "latitude",
    "longitude": "longitude", "owner_name": "owner_name", "applicant_name": "applicant_name",
    "applicant_email": "applicant_email", "issued_on": "issued_on", "decision_filed_on": "decision_filed_on",
    "construction_started_on": "construction_started_on", "construction_started_time": "construction_started_time",
    "disturbed_acres": "disturbed_acres",
    "redevelopment": "is_redevelopment", "cgp_schedule": "cgp_schedule", "sensitive_waters": "sensitive_waters",
    "sensitive_waters_note": "sensitive_waters_note", "npdes_id": "npdes_id", "surety_amount": "surety_amount",
    "extension_requested_on": "extension_requested_on", "extension_granted_on": "extension_granted_on",
    "start_extended_to": "start_extended_to",
}
STRUCTURE_FIELDS = {
    "name": "name", "kind": "kind", "underground": "is_underground", "design_size": "design_size",
    "design_invert": "design_invert", "material": "material", "groundwater_separation_ft": "groundwater_separation_ft",
    "maintenance_task": "maintenance_task", "maintenance_interval_months": "maintenance_interval_months",
}
DAY_COLUMNS = ("issued_on", "decision_filed_on", "construction_started_on", "extension_requested_on",
               "extension_granted_on", "start_extended_to")
# The accounts a column names, with the role they must have, and (for inspectors) the capacity.
CAPACITIES = {"engineer_email": "design_engineer", "erosion_control_inspector_email": "erosion_control_inspector"}
_SCHEDULES = {**{key: key for key in CGP_SCHEDULES}, **{choice.label.lower(): choice.value for choice in CGP_CHOICES},
              "7": "every_7_days", "14": "every_14_days_and_storm"}
_KINDS = {**{kind: kind for kind in STRUCTURE_KINDS}, **{kind.replace("_", " "): kind for kind in STRUCTURE_KINDS}}
_LISTED = re.compile(r"^(?P<name>.+?)\s*\((?P<kind>[^()]*)\)$")


@dataclass
class _Planned:
    """A good row, waiting for its batch: the permit's fields, its owner and inspectors, its structures."""

    row: int
    town_id: str
    number: str
    fields: dict[str, Any]
    owner_id: str | None
    inspectors: list[tuple[str, str]]          # (user id, capacity)
    structures: list[tuple[int, dict[str, Any]]] = field(default_factory=list)  # (row, fields)


@dataclass
class _New:
    """A new permit's rows, with its structures' and inspectors', to write with plain INSERTs."""

    permit: dict[str, Any]
    structures: list[dict[str, Any]]
    assignments: list[dict[str, Any]]


def in_massachusetts(latitude: float, longitude: float) -> bool:
    return (MASSACHUSETTS_LATITUDES[0] <= latitude <= MASSACHUSETTS_LATITUDES[1]
            and MASSACHUSETTS_LONGITUDES[0] <= longitude <= MASSACHUSETTS_LONGITUDES[1])


class PermitImport:
    """One import of a permits file (and its structures): `run` yields its events; with `apply`, it writes."""

    def __init__(self, actor, towns: Towns, *, apply: bool = False) -> None:
        self.actor, self.towns, self.apply = actor, towns, apply
        self.permit_form = PermitForm(formdata=None, meta={"csrf": False})
        self.structure_form = StructureForm(formdata=None, meta={"csrf": False})
        self.accounts: dict[tuple[str, str], str | None] = {}  # (email, role) -> the account's id
        # (town id, number) -> the row that first gave it, for every permit row of the file
        self.in_file: dict[tuple[str, str], int] = {}
        # (town id, number) -> permit id, of the towns' permits recorded (and made by this import)
        self.recorded = self._recorded_permits()
        # number -> its town, for a structures row that names no town (None: numbers of several towns)
        self.town_of_number: dict[str, str | None] = {}
        for town_id, number in self.recorded:
            self._note_town(number, town_id)
        self.structure_names: set[tuple[str, str, str]] = set()
        self.failed = False

    def _note_town(self, number: str, town_id: str) -> None:
        known = self.town_of_number.setdefault(number, town_id)
        if known != town_id:
            self.town_of_number[number] = None

    def _recorded_permits(self) -> dict[tuple[str, str], str]:
        ids = [town.id for town in ([self.towns.only] if self.towns.only else self.towns.all)]
        query = select(Permit.jurisdiction_id, Permit.number, Permit.id).where(Permit.jurisdiction_id.in_(ids))
        return {(town, number): pid for town, number, pid in db.session.execute(query)}

    # -- the file ------------------------------------------------------------------------------------

    def run(self, permits: Sheet, structures: Sheet | None = None) -> Iterator:
        """The events of the permits sheet, then of the structures sheet (or file) if there is one."""
        problems = header_problems(permits, PERMIT_COLUMNS)
        if structures is not None:
            problems += header_problems(structures, STRUCTURE_COLUMNS)
        yield from problems
        if any(isinstance(p, Problem) for p in problems):
            return
        batch: list[_Planned] = []
        count = 0
        for row in permits.rows:
            count += 1
            planned, found = self._permit_row(row)
            yield from found
            if planned is not None:
                batch.append(planned)
            if len(batch) >= BATCH:
                yield from self._write_permits(batch)
                batch = []
            if count % PROGRESS_EVERY == 0:
                yield Progress(count)
        yield from self._write_permits(batch)
        yield Progress(count)
        if structures is not None and not self.failed:
            yield from self._structure_rows(structures)

    def _permit_row(self, row: Row) -> tuple[_Planned | None, list[Problem]]:
        problems = cell_problems(row)
        if problems:
            return None, problems
        try:
            town = self.towns.find(row.text("town"))
        except ValueError as error:
            return None, [Problem(row.number, "town", str(error))]
        data, problems = self._form_data(row, PERMIT_FIELDS)
        number = row.text("permit_number")
        key = (town.id, number)
        if number:
            if key in self.in_file:
                problems.append(Problem(row.number, "permit_number", f"Permit {number} is also on row "
                                        f"{self.in_file[key]}: give each permit once in a file."))
            else:
                self.in_file[key] = row.number
                self._note_town(number, town.id)
        form = self.permit_form
        form.process(formdata=MultiDict(data))
        form.jurisdiction_id.choices = [(town.id, town.name)]
        form.jurisdiction_id.data = town.id
        form.owner_id.choices = [("", "")]
        if not form.validate():
            columns = {f: c for c, f in PERMIT_FIELDS.items()}
            told = {p.column for p in problems}  # a cell that could not be read is not also "required"
            for name, messages in form.errors.items():
                if columns.get(name, name) not in told:
                    problems += [Problem(row.number, columns.get(name, name), m) for m in messages]
        fields = self._permit_fields(row, form) if not problems else {}
        if fields and not in_massachusetts(fields["latitude"], fields["longitude"]):
            problems.append(Problem(row.number, "latitude", f"({fields['latitude']}, {fields['longitude']}) is not "
                                    "in Massachusetts: check the latitude and longitude (west is negative)."))
        owner_id, inspectors = self._accounts(row, problems)
        structures = self._listed_structures(row, key, problems)
        if problems:
            return None, problems
        return _Planned(row.number, town.id, number, fields, owner_id, inspectors, structures), []

    def _form_data(self, row: Row, columns: dict[str, str]) -> tuple[dict[str, str], list[Problem]]:
        """The form's input from the row's cells: days as YYYY-MM-DD, yes/no as the form takes them."""
        data, problems = {}, []
        for column, name in columns.items():
            text = row.text(column)
            try:
                if column in DAY_COLUMNS:
                    day = parse_day(text)
                    text = day.isoformat() if day else ""
                elif column == "cgp_schedule" and text:
                    text = _SCHEDULES.get(text.lower()) or _refuse(f"{text!r} is not a CGP schedule: write "
                                                                   f"{' or '.join(CGP_SCHEDULES)}.")
                elif column == "construction_started_time":
                    moment = parse_time(text)
                    text = moment.strftime("%H:%M") if moment else ""
                elif column == "redevelopment":
                    text = "1" if parse_yes_no(text) else "0"
                elif column == "sensitive_waters":
                    text = "y" if parse_yes_no(text) else ""
            except ValueError as error:
                problems.append(Problem(row.number, column, str(error)))
                continue
            if text:
                data[name] = text
        return data, problems

    def _permit_fields(self, row: Row, form: PermitForm) -> dict[str, Any]:
        """The permit's columns the row gives (an empty optional cell gives nothing: the recorded value stays)."""
        fields = {}
        for column, name in PERMIT_FIELDS.items():
            if not row.text(column):
                continue
            value = form[name].data
            if name == "construction_started_time":
                # Not a column of the permit: the moment it names with the day (§380-2), as the permit form keeps it.
                fields["construction_started_at"] = dt.datetime.combine(
                    form.construction_started_on.data, value, tzinfo=LOCAL_TZ).astimezone(dt.UTC)
                continue
            if name == "is_redevelopment":
                value = value == "1"
            elif isinstance(value, str):
                value = value.strip()
            fields[name] = value
        return fields

    def _account(self, email: str, role: str) -> str | None:
        """The id of the account of `role` with this email, among those the importer may choose for a permit
        (`people_to_choose`, as the permit form offers them): a town's admin neither attaches the people who work
        only in other towns nor learns, from the answer, which addresses have an account there."""
        key = (email.strip().lower(), role)
        if key not in self.accounts:
            # The command (no actor) imports for every town: anyone of the role.
            people = (people_to_choose(self.actor, role) if self.actor is not None
                      else select(User).where(User.role == role))
            self.accounts[key] = db.session.scalar(people.with_only_columns(User.id)
                                                   .where(func.lower(User.email) == key[0]))
        return self.accounts[key]

    def _accounts(self, row: Row, problems: list[Problem]) -> tuple[str | None, list[tuple[str, str]]]:
        owner_id = None
        if row.text("owner_email"):
            owner_id = self._account(row.text("owner_email"), "permittee")
            if owner_id is None:
                problems.append(Problem(row.number, "owner_email", "No permittee's account you may choose has the "
                                        f"email {row.text('owner_email')!r}: import the users first, or leave it "
                                        "empty."))
        inspectors = []
        for column, capacity in CAPACITIES.items():
            for email in filter(None, (e.strip() for e in re.split(r"[;,\n]", row.text(column)))):
                found = self._account(email, "inspector")
                if found is None:
                    problems.append(Problem(row.number, column, "No inspector's account you may choose has the email "
                                            f"{email!r}: import the users first (only inspectors are assigned to "
                                            "permits)."))
                elif (found, capacity) not in inspectors:
                    inspectors.append((found, capacity))
        return owner_id, inspectors

    def _listed_structures(self, row: Row, key, problems: list[Problem]) -> list[tuple[int, dict[str, Any]]]:
        found = []
        for item in filter(None, (i.strip() for i in re.split(r"[;\n]", row.text("structures")))):
            match = _LISTED.match(item)
            if match is None:
                problems.append(Problem(row.number, "structures", f"{item!r}: write each structure as "
                                        "'name (kind)', e.g. 'IS-1 (infiltration)', separated by ';'."))
                continue
            cells = {"name": match["name"], "kind": match["kind"]}
            fields = self._structure_fields(row.number, cells, key, problems, column="structures")
            if fields is not None:
                found.append((row.number, fields))
        return found

    def _structure_fields(self, number: int, cells: dict[str, str], key, problems: list[Problem],
                          column: str | None = None) -> dict[str, Any] | None:
        """A structure's fields from its cells, checked by the structure form; None (with problems) if bad."""
        before = len(problems)
        data = {}
        kind_text = cells.get("kind", "").strip().lower()
        kind = _KINDS.get(kind_text)
        if kind_text and kind is None:
            problems.append(Problem(number, column or "kind", f"{cells.get('kind')!r} is not a kind of structure: "
                                    f"write one of {', '.join(STRUCTURE_KINDS)}."))
        for name_column, name in STRUCTURE_FIELDS.items():
            text = cells.get(name_column, "")
            if name_column == "kind":
                text = kind or ""
            elif name_column == "underground":
                try:
                    text = "y" if (parse_yes_no(text) if text else True) else ""
                except ValueError as error:
                    problems.append(Problem(number, column or name_column, str(error)))
                    continue
            if text:
                data[name] = text
        form = self.structure_form
        form.process(formdata=MultiDict(data))
        if not form.validate():
            for name, messages in form.errors.items():
                if name == "kind" and len(problems) > before:
                    continue
                where = column or {f: c for c, f in STRUCTURE_FIELDS.items()}.get(name, name)
                problems += [Problem(number, where, (f"{cells.get('name', '')}: " if column else "") + m)
                             for m in messages]
        fields = {name: form[name].data for name in STRUCTURE_FIELDS.values()}
        for name, value in fields.items():
            if isinstance(value, str):
                fields[name] = value.strip() or None
        point = self._point(number, cells, problems, column)
        if len(problems) > before:
            return None
        fields.update(point)
        if column is not None:  # a list gives name and kind only: the other columns stay as recorded
            fields = {name: fields[name] for name in ("name", "kind")}
        seen = (key[0], key[1], fields["name"].lower())
        if seen in self.structure_names:
            problems.append(Problem(number, column or "name", f"Structure {fields['name']} of permit {key[1]} is "
                                    "given twice in the file."))
            return None
        self.structure_names.add(seen)
        return fields

    def _point(self, number: int, cells: dict[str, str], problems: list[Problem], column) -> dict[str, float]:
        given = {name: cells.get(name, "").strip() for name in ("latitude", "longitude")}
        if not any(given.values()):
            return {}
        try:
            latitude, longitude = float(given["latitude"]), float(given["longitude"])
        except ValueError:
            problems.append(Problem(number, column or "latitude", "Give both latitude and longitude, as decimal "
                                    "degrees, or neither."))
            return {}
        if not in_massachusetts(latitude, longitude):
            problems.append(Problem(number, column or "latitude", f"({latitude}, {longitude}) is not in "
                                    "Massachusetts: check the latitude and longitude (west is negative)."))
            return {}
        return {"latitude": latitude, "longitude": longitude}

    # -- writing a batch ---------------------------------------------------------------------------------

    def _write_permits(self, batch: list[_Planned]) -> Iterator:
        if not batch:
            return
        keys = {(p.town_id, p.number) for p in batch}
        ids = [self.recorded[k] for k in keys if k in self.recorded]
        existing = {}
        if ids:
            query = (select(Permit).where(Permit.id.in_(ids))
                     .options(selectinload(Permit.assignments), selectinload(Permit.structures)))
            existing = {(p.jurisdiction_id, p.number): p for p in db.session.scalars(query)}
        written = []
        for planned in batch:
            permit = existing.get((planned.town_id, planned.number))
            outcome, changes = (self._create(planned) if permit is None else self._update(permit, planned))
            yield outcome
            if changes is not None:
                written.append(changes)
        if self.apply and written:
            yield from self._flush_and_record(written, batch[0].row, batch[-1].row)

    def _create(self, planned: _Planned):
        outcome = Outcome(planned.row, CREATE, planned.number)
        if not self.apply:
            return outcome, None
        # Not added: settle_status reads the facts (its town's too: work begun after the permit lapsed, §9.7).
        facts = Permit(status="issued", jurisdiction_id=planned.town_id, **planned.fields)
        settle_status(facts)
        permit = audit.new_row(Permit, {"jurisdiction_id": planned.town_id, "status": facts.status,
                                        "owner_id": planned.owner_id, **planned.fields})
        structures = [audit.new_row(StormwaterStructure, {"permit_id": permit["id"], **fields})
                      for _, fields in planned.structures]
        assignments = [audit.new_row(PermitAssignment, {"permit_id": permit["id"], "user_id": user_id,
                                                        "capacity": capacity})
                       for user_id, capacity in planned.inspectors]
        return outcome, _New(permit, structures, assignments)

    def _update(self, permit: Permit, planned: _Planned):
        changed = [name for name, value in planned.fields.items() if not _same(name, getattr(permit, name), value)]
        if planned.owner_id and permit.owner_id != planned.owner_id:
            changed.append("owner_id")
        have = {(a.user_id, a.capacity) for a in permit.assignments}
        assign = [pair for pair in planned.inspectors if pair not in have]
        by_name = {s.name.lower(): s for s in permit.structures}
        new_structures, changed_structures = [], []
        for _, fields in planned.structures:
            structure = by_name.get(fields["name"].lower())
            if structure is None:
                new_structures.append(fields)
            elif any(getattr(structure, name) != value for name, value in fields.items() if name != "name"):
                changed_structures.append((structure, fields))
        columns = {f: c for c, f in PERMIT_FIELDS.items()} | {"owner_id": "owner_email",
                                                               "construction_started_at": "construction_started_time"}
        changes = tuple(columns.get(name, name) for name in changed)
        changes += tuple(sorted({c for pair in assign for c, cap in CAPACITIES.items() if cap == pair[1]}))
        if new_structures or changed_structures:
            changes += ("structures",)
        if not changes:
            return Outcome(planned.row, UNCHANGED, planned.number), None
        outcome = Outcome(planned.row, UPDATE, planned.number, changes)
        if not self.apply:
            return outcome, None
        action, before = None, None
        if changed:
            action, before = "permit.update", audit.snapshot(permit)
            for name in changed:
                setattr(permit, name, planned.owner_id if name == "owner_id" else planned.fields[name])
            if start_time_stale(permit):
                permit.construction_started_at = None  # a day moved without its time keeps no stale time (§380-2)
            settle_status(permit)
            permit.revision += 1
        updates = []
        for structure, fields in changed_structures:
            updates.append((structure, audit.snapshot(structure)))
            for name, value in fields.items():
                setattr(structure, name, value)
            structure.revision += 1
        made = [StormwaterStructure(**fields) for fields in new_structures]
        permit.structures.extend(made)
        assignments = [PermitAssignment(user_id=user_id, capacity=capacity) for user_id, capacity in assign]
        permit.assignments.extend(assignments)
        return outcome, (action, permit, before, made, assignments, updates)

    def _flush_and_record(self, written, first_row: int, last_row: int) -> Iterator[Problem]:
        """Write the batch, then its audit entries (written with the next flush, in one statement).

        The permits it updates are flushed; those it makes are written with one INSERT of many rows per
        table (the services' ORM cascade measured about 0.4 ms a permit, most of a large import's writing),
        their entries made from the rows as a flush would have made them (`audit.record_inserted`), and
        their schedule stored at commit like that of any permit changed (`obligations.note_written`)."""
        if self.failed:  # the transaction is lost already (PostgreSQL refuses every statement after)
            return
        new = [item for item in written if isinstance(item, _New)]
        try:
            db.session.flush()
            for table, rows in ((Permit, [n.permit for n in new]),
                                (StormwaterStructure, [s for n in new for s in n.structures]),
                                (PermitAssignment, [a for n in new for a in n.assignments])):
                if rows:
                    db.session.execute(insert(table), rows)
        except DBAPIError as error:
            self.failed = True
            yield Problem(None, "", f"The database refused a value in rows {first_row}–{last_row}: "
                                    f"{str(error.orig).splitlines()[0]}. Nothing was changed.")
            return
        obligations.note_written(db.session(), [n.permit["id"] for n in new])
        for item in written:
            if isinstance(item, _New):
                self._record_new(item)
                continue
            action, permit, before, structures, assignments, updates = item
            if action:
                audit.record_flushed(self.actor, action, permit, before)
            if action == "permit.create":
                self.recorded[(permit.jurisdiction_id, permit.number)] = permit.id
            for structure in structures:
                audit.record_flushed(self.actor, "structure.create", structure, permit_id=permit.id)
            for structure, before_structure in updates:
                audit.record_flushed(self.actor, "structure.update", structure, before_structure)
            for assignment in assignments:
                audit.record_flushed(self.actor, "permit.assign", assignment, permit_id=permit.id)
        audit.write_recorded()  # now: the INSERTs flushed nothing, so no flush would write them before the commit

    def _record_new(self, new: _New) -> None:
        """The entries of a new permit, in the order the services write them: the permit, its structures,
        its inspectors."""
        permit = new.permit
        audit.record_inserted(self.actor, "permit.create", Permit, permit)
        self.recorded[(permit["jurisdiction_id"], permit["number"])] = permit["id"]
        for structure in new.structures:
            audit.record_inserted(self.actor, "structure.create", StormwaterStructure, structure)
        for assignment in new.assignments:
            audit.record_inserted(self.actor, "permit.assign", PermitAssignment, assignment)

    # -- a structures sheet or file --------------------------------------------------------------------

    def _structure_rows(self, sheet: Sheet) -> Iterator:
        batch: list[tuple[str, str, int, dict[str, Any]]] = []  # (permit id or "", number, row, fields)
        count = 0
        for row in sheet.rows:
            count += 1
            problems = cell_problems(row)
            if not problems:
                number = row.text("permit_number")
                try:
                    town_id = self._structure_town(row.text("town"), number)
                except LookupError:
                    problems.append(Problem(row.number, "permit_number", f"No permit {number}: it is neither in "
                                                                         "the permits file nor recorded."))
                except ValueError as error:
                    problems.append(Problem(row.number, "town", str(error)))
                else:
                    key = (town_id, number)
                    town = next(t for t in self.towns.all if t.id == town_id)
                    if key not in self.in_file and key not in self.recorded:
                        problems.append(Problem(row.number, "permit_number", f"No permit {number} in "
                                                f"{town.name}: it is neither in the permits file nor recorded."))
                    else:
                        cells = {column: row.text(column) for column in STRUCTURE_COLUMNS}
                        fields = self._structure_fields(row.number, cells, key, problems)
                        if fields is not None:
                            batch.append((key, row.number, fields))
            yield from problems
            if len(batch) >= BATCH:
                yield from self._write_structures(batch)
                batch = []
            if count % PROGRESS_EVERY == 0:
                yield Progress(count)
        yield from self._write_structures(batch)

    def _structure_town(self, text: str, number: str) -> str:
        """The town of a structures row: named, or else the one whose permit has the number (if only one has)."""
        if text or self.towns.default is not None:
            return self.towns.find(text).id
        if number not in self.town_of_number:
            raise LookupError(number)
        town_id = self.town_of_number[number]
        if town_id is None:
            return self.towns.find(text).id  # names the towns to choose from
        return town_id

    def _write_structures(self, batch) -> Iterator:
        if not batch:
            return
        ids = {self.recorded[key] for key, _, _ in batch if key in self.recorded}
        structures = {}
        if ids:
            for structure in db.session.scalars(select(StormwaterStructure)
                                                .where(StormwaterStructure.permit_id.in_(ids))):
                structures[(structure.permit_id, structure.name.lower())] = structure
        written = []
        for key, number, fields in batch:
            permit_id = self.recorded.get(key)
            structure = structures.get((permit_id, fields["name"].lower())) if permit_id else None
            label = f"{key[1]}: {fields['name']}"
            if structure is None:
                yield Outcome(number, CREATE, label)
                if self.apply:
                    made = StormwaterStructure(permit_id=permit_id, **fields)
                    db.session.add(made)
                    written.append(("structure.create", made, None))
                continue
            changed = [name for name, value in fields.items() if getattr(structure, name) != value]
            if not changed:
                yield Outcome(number, UNCHANGED, label)
                continue
            yield Outcome(number, UPDATE, label, tuple({f: c for c, f in STRUCTURE_FIELDS.items()}.get(n, n)
                                                       for n in changed))
            if self.apply:
                before = audit.snapshot(structure)
                for name in changed:
                    setattr(structure, name, fields[name])
                structure.revision += 1
                written.append(("structure.update", structure, before))
        if not self.apply or not written:
            return
        try:
            db.session.flush()
        except DBAPIError as error:
            self.failed = True
            yield Problem(None, "", f"The database refused a structure in rows {batch[0][1]}–{batch[-1][1]}: "
                                    f"{str(error.orig).splitlines()[0]}. Nothing was changed.")
            return
        for action, structure, before in written:
            audit.record_flushed(self.actor, action, structure, before)


def _same(name: str, recorded: Any, given: Any) -> bool:
    """Whether a row's value is what is recorded: the start's moment to the minute, as the file writes it (one
    set in the app keeps its seconds, and its own exported row was read as a change)."""
    if name == "construction_started_at" and recorded is not None and given is not None:
        return recorded.replace(second=0, microsecond=0) == given
    return recorded == given


def _refuse(message: str):
    raise ValueError(message)


def header_problems(sheet: Sheet, columns: dict) -> list[Problem | Notice]:
    """Required columns missing (the file cannot be read as this kind), and columns the import will ignore."""
    missing = [name for name, column in columns.items() if column.required and name not in sheet.keys]
    problems = []
    if missing:
        problems.append(Problem(None, ", ".join(missing), f"{sheet.name}: the column(s) {', '.join(missing)} are "
                                "missing (the first row names the columns; download the template)."))
    doubled = sorted({key for key in sheet.keys if key and sheet.keys.count(key) > 1})
    if doubled:
        problems.append(Problem(None, ", ".join(doubled), f"{sheet.name}: the column(s) {', '.join(doubled)} "
                                "are given twice."))
    ignored = [header for key, header in zip(sheet.keys, sheet.headers)
               if header and key not in columns and key not in EXPORT_ONLY]
    if ignored:
        problems.append(Notice(f"{sheet.name}: read past the column(s) {', '.join(ignored)}, which this import "
                               "does not know (the template names those it reads)."))
    return problems
