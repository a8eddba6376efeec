"""`flask import permits FILE`: a dry run by default, all or nothing with --apply, updates by permit number."""
from __future__ import annotations

import codecs
import csv
import io
import re
import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import func, select

from inspect_app.audit import models as audit_models
from inspect_app.audit import services as audit
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.permits.models import Permit, PermitAssignment, StormwaterStructure
from inspect_app.schedule import obligations
from inspect_app.schedule.models import PermitObligation
from inspect_app.transfer import permits as importer

from tests.transfer.sheets import PERMIT_HEADER, damaged_workbook, permit_row, table_rows, write_csv, write_xlsx


def _permits() -> list[Permit]:
    return list(db.session.scalars(select(Permit).order_by(Permit.number)))


def _import(runner, path, *extra):
    return runner.invoke(args=["import", "permits", str(path), *extra])


def test_a_dry_run_prints_what_it_would_create_and_changes_nothing(app, runner, tmp_path, make):
    make.town()
    db.session.commit()
    path = write_csv(tmp_path / "permits.csv", [permit_row("LM-1"), permit_row("LM-2")])
    before = table_rows()
    result = _import(runner, path)
    assert result.exit_code == 0, result.output
    assert "create                   LM-1" in result.output and "create                   LM-2" in result.output
    assert "Dry run: 2 to create, 0 to update, 0 unchanged. Nothing was changed" in result.output
    assert table_rows() == before


def test_apply_creates_the_permits_with_their_structures_and_audit_entries(app, runner, tmp_path, make):
    path = write_csv(tmp_path / "permits.csv", [
        permit_row("LM-1", structures="IS-1 (infiltration); CB-2 (catch basin)"),
        permit_row("LM-2", issued_on="4/2/2024", cgp_schedule="Every 14 days and within 24 h of a storm (of the town's threshold)",
                   sensitive_waters="yes", sensitive_waters_note="Longmeadow Brook, impaired for sediment")])
    result = _import(runner, path, "--apply")
    assert result.exit_code == 0, result.output
    assert "Applied: 2 created, 0 updated, 0 unchanged." in result.output
    first, second = _permits()
    assert (first.number, first.site_address, first.parcel_id, first.latitude, first.longitude) == (
        "LM-1", "123 Maple Road, Longmeadow, MA", "12-34-5", 42.0501, -72.5823)
    assert first.disturbed_acres == Decimal("2.400") and first.status == "issued"
    assert sorted((s.name, s.kind) for s in first.structures) == [("CB-2", "catch_basin"), ("IS-1", "infiltration")]
    assert second.issued_on == dt.date(2024, 4, 2) and second.cgp_schedule == "every_14_days_and_storm"
    assert second.sensitive_waters and second.sensitive_waters_note == "Longmeadow Brook, impaired for sediment"
    actions = sorted(db.session.scalars(select(AuditEntry.action)))
    assert actions == ["permit.create", "permit.create", "structure.create", "structure.create"]
    assert audit.verify_chain().broken is None
    # the schedule of the new permits is stored at commit, as for any change (schedule/obligations.py)
    assert db.session.scalar(select(func.count()).select_from(PermitObligation)) > 0


def test_importing_again_updates_by_permit_number_and_never_duplicates(app, runner, tmp_path, make):
    path = write_csv(tmp_path / "permits.csv", [permit_row("LM-1", structures="IS-1 (infiltration)")])
    assert _import(runner, path, "--apply").exit_code == 0
    again = _import(runner, path, "--apply")
    assert "Applied: 0 created, 0 updated, 1 unchanged." in again.output
    assert db.session.scalar(select(func.count()).select_from(AuditEntry)) == 2  # nothing recorded the second time
    changed = write_csv(tmp_path / "changed.csv", [permit_row("LM-1", site_address="125 Maple Road",
                                                              structures="IS-1 (basin); OF-1 (outfall)")])
    result = _import(runner, changed, "--apply")
    assert result.exit_code == 0, result.output
    assert "update                   LM-1 (site_address, structures)" in result.output
    (permit,) = _permits()
    assert permit.site_address == "125 Maple Road" and permit.revision == 2
    assert sorted((s.name, s.kind) for s in permit.structures) == [("IS-1", "basin"), ("OF-1", "outfall")]
    update = db.session.scalar(select(AuditEntry).where(AuditEntry.action == "permit.update"))
    assert update.before["site_address"] == "123 Maple Road, Longmeadow, MA"
    assert update.after["site_address"] == "125 Maple Road"
    assert db.session.scalar(select(func.count()).select_from(StormwaterStructure)) == 2


def test_an_empty_cell_leaves_the_recorded_value(app, runner, tmp_path, make):
    assert _import(runner, write_csv(tmp_path / "a.csv", [permit_row("LM-1", applicant_email="a@example.org")]),
                   "--apply").exit_code == 0
    result = _import(runner, write_csv(tmp_path / "b.csv", [permit_row("LM-1", applicant_email="")]), "--apply")
    assert "1 unchanged" in result.output
    assert _permits()[0].applicant_email == "a@example.org"


def test_owner_and_engineer_are_linked_by_their_accounts_email(app, runner, tmp_path, make):
    owner, engineer = make.user("permittee", email="owner@example.org"), make.user("inspector", email="pe@example.org")
    path = write_csv(tmp_path / "p.csv", [permit_row("LM-1", owner_email="Owner@Example.org",
                                                     engineer_email="pe@example.org")])
    assert _import(runner, path, "--apply").exit_code == 0
    (permit,) = _permits()
    assert permit.owner_id == owner.id
    assert [(a.user_id, a.capacity) for a in permit.assignments] == [(engineer.id, "design_engineer")]
    assert "permit.assign" in set(db.session.scalars(select(AuditEntry.action)))


def _as_stored(data: dict) -> dict:
    """A snapshot with its times as UTC instants (SQLite gives them back without their zone), its decimals as
    numbers (2.4 was written, the column gives 2.400)."""
    found = {}
    for key, value in data.items():
        if isinstance(value, str) and re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+(\+00:00)?", value):
            value = dt.datetime.fromisoformat(value).replace(tzinfo=dt.UTC)
        elif isinstance(value, str) and re.fullmatch(r"-?\d+\.\d+", value):
            value = Decimal(value)
        found[key] = value
    return found


def test_the_entry_of_each_new_record_holds_what_is_stored(app, runner, tmp_path, make):
    # New permits are written as rows, not objects: their entries must still be those a flush would give.
    owner, engineer = make.user("permittee", email="owner@example.org"), make.user("inspector", email="pe@example.org")
    db.session.commit()
    path = write_csv(tmp_path / "p.csv", [permit_row("LM-1", owner_email="owner@example.org",
                                                     engineer_email="pe@example.org", structures="IS-1 (infiltration)",
                                                     construction_started_on="2024-05-01")],
                     header=[*PERMIT_HEADER, "construction_started_on"])
    assert _import(runner, path, "--apply").exit_code == 0
    db.session.expire_all()
    entries = list(db.session.scalars(select(AuditEntry).where(AuditEntry.action.in_(
        ["permit.create", "structure.create", "permit.assign"])).order_by(AuditEntry.seq)))
    assert [(e.action, e.entity) for e in entries] == [
        ("permit.create", "permits"), ("structure.create", "stormwater_structures"),
        ("permit.assign", "permit_assignments")]
    (permit,) = _permits()
    assert permit.status == "active" and permit.owner_id == owner.id  # settled from its facts, as the form does
    models = {"permits": Permit, "stormwater_structures": StormwaterStructure, "permit_assignments": PermitAssignment}
    for entry in entries:
        stored = db.session.get(models[entry.entity], entry.entity_id)
        assert entry.permit_id == permit.id and entry.before is None and entry.actor_id is None
        assert _as_stored(entry.after) == _as_stored(audit.snapshot(stored))
    assert audit.verify_chain().broken is None


@pytest.mark.parametrize("cells, column, message", [
    ({"town": "Springfield"}, "town", "'Springfield' is not a town here"),
    ({"cgp_schedule": "weekly"}, "cgp_schedule", "'weekly' is not a CGP schedule"),
    ({"applicant_email": "someone@"}, "applicant_email", "Invalid email address."),
    ({"owner_email": "nobody@example.org"}, "owner_email", "No permittee's account you may choose has the email"),
    ({"engineer_email": "nobody@example.org"}, "engineer_email", "No inspector's account you may choose has the email"),
    ({"latitude": "40.7128", "longitude": "-74.0060"}, "latitude", "is not in Massachusetts"),
    ({"latitude": "-72.5823", "longitude": "42.0501"}, "latitude", "is not in Massachusetts"),
    ({"issued_on": "the first of April"}, "issued_on", "is not a day between 1900 and 2199"),
    ({"disturbed_acres": "lots"}, "disturbed_acres", "Not a valid decimal value."),
    ({"site_address": ""}, "site_address", "This field is required."),
    ({"sensitive_waters": "yes"}, "sensitive_waters_note", "Say which water makes the site sensitive."),
    ({"structures": "a basin"}, "structures", "write each structure as 'name (kind)'"),
    ({"structures": "B-1 (pond)"}, "structures", "'pond' is not a kind of structure"),
    ({"owner_name": "Bad\x00Name"}, "owner_name", "NUL character"),
])
def test_a_bad_cell_gets_a_clear_message_and_nothing_is_written(app, runner, tmp_path, make, cells, column, message):
    make.town()
    db.session.commit()
    path = write_csv(tmp_path / "p.csv", [permit_row("LM-1"), permit_row("LM-2", **cells)])
    before = table_rows()
    result = _import(runner, path, "--apply")
    assert result.exit_code == 1
    line = next(line for line in result.output.splitlines() if line.strip().startswith("3 "))
    assert line.split()[1] == column and message in line, result.output
    assert "nothing was changed" in result.output
    assert table_rows() == before  # the good row was not written either: all or nothing


def test_an_address_on_many_rows_is_checked_on_each(app, runner, tmp_path, make):
    # The permit form remembers the addresses it accepted (fields.Email): never one it refused.
    rows = [permit_row(f"LM-{n}", applicant_email=email) for n, email in
            enumerate(["same@example.org", "same@example.org", "someone@", "someone@", "same@example.org"])]
    result = _import(runner, write_csv(tmp_path / "p.csv", rows))
    refused = [line.split()[0] for line in result.output.splitlines() if "Invalid email address." in line]
    assert refused == ["4", "5"]  # rows 4 and 5 of the file (its header is row 1)
    assert "2 problem(s)" in result.output


def test_a_permit_number_repeated_in_the_file_is_refused(app, runner, tmp_path, make):
    make.town()
    db.session.commit()
    path = write_csv(tmp_path / "p.csv", [permit_row("LM-1"), permit_row("LM-2"), permit_row("LM-1")])
    result = _import(runner, path, "--apply")
    assert result.exit_code == 1
    assert "Permit LM-1 is also on row 2: give each permit once in a file." in result.output
    assert _permits() == []


def test_windows_1252_and_utf8_with_a_bom_are_read_as_written(app, runner, tmp_path, make):
    write_csv(tmp_path / "ansi.csv", [permit_row("LM-1", owner_name="Café Société LLC – Nord")], encoding="cp1252")
    bom = tmp_path / "bom.csv"
    write_csv(bom, [permit_row("LM-2", owner_name="Zoë Ōkubo")])
    bom.write_bytes(codecs.BOM_UTF8 + bom.read_bytes())
    for path in (tmp_path / "ansi.csv", bom):
        result = _import(runner, path, "--apply")
        assert result.exit_code == 0, result.output
    assert [p.owner_name for p in _permits()] == ["Café Société LLC – Nord", "Zoë Ōkubo"]
    assert _permits()[1].jurisdiction.profile_key == "longmeadow"  # the BOM is not part of the first header


def test_bytes_that_are_no_text_are_refused(app, runner, tmp_path, make):
    path = tmp_path / "p.csv"
    path.write_bytes(b"town,permit_number\n\x81\x8d\x8f,x\n")  # bytes undefined in Windows-1252 and not UTF-8
    result = _import(runner, path)
    assert result.exit_code == 1 and "neither UTF-8 nor Windows-1252" in result.output


def test_spreadsheet_day_numbers_are_days(app, runner, tmp_path, make):
    # 45383 is 2024-04-01 as a spreadsheet counts days, in a CSV cell and in a workbook's number cell
    write_csv(tmp_path / "p.csv", [permit_row("LM-1", issued_on="45383")])
    header = PERMIT_HEADER
    row = permit_row("LM-2")
    values = [45384 if name == "issued_on" else row[name] for name in header]
    write_xlsx(tmp_path / "p.xlsx", {"permits": [header, values]})
    for name in ("p.csv", "p.xlsx"):
        result = _import(runner, tmp_path / name, "--apply")
        assert result.exit_code == 0, result.output
    assert [p.issued_on for p in _permits()] == [dt.date(2024, 4, 1), dt.date(2024, 4, 2)]


def test_a_workbook_takes_real_dates_numbers_and_its_structures_sheet(app, runner, tmp_path, make):
    row = permit_row("LM-1")
    values = [dt.datetime(2024, 4, 1) if name == "issued_on" else 42.0501 if name == "latitude"
              else 2.4 if name == "disturbed_acres" else row[name] for name in PERMIT_HEADER]
    structures = [["permit_number", "name", "kind", "underground", "groundwater_separation_ft", "latitude", "longitude"],
                  ["LM-1", "IS-1", "infiltration", "yes", 2.5, 42.0502, -72.5824],
                  ["LM-1", "Swale", "bmp", "no", None, None, None]]
    path = write_xlsx(tmp_path / "p.xlsx", {"permits": [PERMIT_HEADER, values], "Structures": structures})
    result = _import(runner, path, "--apply")
    assert result.exit_code == 0, result.output
    (permit,) = _permits()
    assert permit.issued_on == dt.date(2024, 4, 1) and permit.disturbed_acres == Decimal("2.4")
    basin, swale = permit.structures
    assert (basin.name, basin.is_underground, basin.groundwater_separation_ft, basin.latitude) == (
        "IS-1", True, Decimal("2.50"), 42.0502)
    assert (swale.name, swale.is_underground, swale.latitude) == ("Swale", False, None)


def test_a_formula_is_read_as_text_never_worked_out_and_refused(app, runner, tmp_path, make):
    make.town()
    db.session.commit()
    row = permit_row("LM-1")
    values = ["=40+2.0501" if name == "latitude" else row[name] for name in PERMIT_HEADER]
    path = write_xlsx(tmp_path / "p.xlsx", {"permits": [PERMIT_HEADER, values]})
    before = table_rows()
    result = _import(runner, path, "--apply")
    assert result.exit_code == 1
    assert "latitude                 holds a formula (=40+2.0501); formulas are read as text" in result.output
    assert table_rows() == before


def test_structures_from_a_second_file(app, runner, tmp_path, make):
    permits = write_csv(tmp_path / "permits.csv", [permit_row("LM-1"), permit_row("LM-2")])
    structures = write_csv(tmp_path / "structures.csv", [
        {"permit_number": "LM-1", "name": "IS-1", "kind": "infiltration", "maintenance_interval_months": "12"},
        {"permit_number": "LM-3", "name": "IS-1", "kind": "infiltration", "maintenance_interval_months": "12"}])
    result = _import(runner, permits, "--structures", str(structures), "--apply")
    assert result.exit_code == 1
    assert "permit_number            No permit LM-3: it is neither in the permits file nor recorded." in result.output
    assert _permits() == []
    structures = write_csv(tmp_path / "structures.csv", [
        {"permit_number": "LM-1", "name": "IS-1", "kind": "infiltration", "maintenance_interval_months": "12"}])
    assert _import(runner, permits, "--structures", str(structures), "--apply").exit_code == 0
    assert [(s.name, s.maintenance_interval_months) for s in _permits()[0].structures] == [("IS-1", 12)]


def test_a_missing_required_column_refuses_the_file(app, runner, tmp_path, make):
    path = write_csv(tmp_path / "p.csv", [{"permit_number": "LM-1", "site_address": "1 Main"}])
    result = _import(runner, path)
    assert result.exit_code == 1
    assert "the column(s) latitude, longitude, owner_name, applicant_name, issued_on, disturbed_acres, " \
           "cgp_schedule are missing" in result.output


def test_not_a_spreadsheet_is_refused(app, runner, tmp_path):
    path = tmp_path / "p.xlsx"
    path.write_bytes(b"not a workbook")
    result = _import(runner, path)
    assert result.exit_code == 1 and "The workbook cannot be read" in result.output
    other = tmp_path / "p.pdf"
    other.write_bytes(b"%PDF")
    assert "neither a .csv nor an .xlsx file" in _import(runner, other).output


def test_a_large_file_is_applied_in_one_transaction_with_the_chain_whole(app, runner, tmp_path, make, monkeypatch):
    # More rows than a batch, more entries than a sealing batch: still one commit, and the chain verifies.
    monkeypatch.setattr(importer, "BATCH", 7)
    monkeypatch.setattr(audit_models, "SEAL_BATCH", 5)
    monkeypatch.setattr(obligations, "REFRESH_BATCH", 6)
    rows = [permit_row(f"LM-{n:03d}", structures="IS-1 (infiltration)" if n % 3 == 0 else "") for n in range(40)]
    result = _import(runner, write_csv(tmp_path / "p.csv", rows), "--apply")
    assert result.exit_code == 0, result.output
    assert len(_permits()) == 40
    found = audit.verify_chain()
    assert found.broken is None and found.verified == 40 + 14
    assert db.session.scalar(select(func.count()).select_from(PermitAssignment)) == 0
    # each permit's schedule was stored at the commit, a batch of permits at a time
    scheduled = db.session.scalar(select(func.count(func.distinct(PermitObligation.permit_id))))
    assert scheduled == 40


def test_a_csv_saved_with_semicolons_is_read(app, runner, tmp_path, make):
    path = tmp_path / "p.csv"
    write_csv(path, [permit_row("LM-1")])
    rows = list(csv.reader(io.StringIO(path.read_text())))
    out = io.StringIO()
    csv.writer(out, delimiter=";").writerows(rows)
    path.write_text(out.getvalue())
    result = _import(runner, path, "--apply")
    assert result.exit_code == 0, result.output
    assert [p.site_address for p in _permits()] == ["123 Maple Road, Longmeadow, MA"]


def test_an_import_moving_the_start_day_keeps_no_stale_start_time(app, runner, tmp_path, make):
    """§380-2: the start of construction is kept with its time, which the stabilization clocks and the first
    inspection run from. The import set the start's day alone, so the time of the old day stayed (the permit form
    drops a time whose day changed)."""
    permit = make.permit(number="LM-START", issued_on=dt.date(2024, 3, 1),
                         construction_started_on=dt.date(2024, 3, 4), construction_started_time=dt.time(8, 0))
    assert permit.construction_started_at is not None
    path = write_csv(tmp_path / "p.csv", [permit_row("LM-START", issued_on="2024-03-01",
                                                     site_address=permit.site_address,
                                                     latitude=str(permit.latitude), longitude=str(permit.longitude),
                                                     construction_started_on="2024-04-15")],
                     header=[*PERMIT_HEADER, "construction_started_on"])
    assert _import(runner, path, "--apply").exit_code == 0
    db.session.expire_all()
    stored = db.session.get(Permit, permit.id)
    assert stored.construction_started_on == dt.date(2024, 4, 15) and stored.construction_started_at is None


def test_a_workbook_cut_off_inside_its_sheet_is_refused_and_nothing_is_changed(app, runner, tmp_path, make):
    make.town()
    db.session.commit()
    path = tmp_path / "permits.xlsx"
    path.write_bytes(damaged_workbook(tmp_path))
    before = table_rows()
    result = runner.invoke(args=["import", "permits", str(path), "--apply"])
    assert not isinstance(result.exception, SyntaxError), repr(result.exception)
    assert result.exit_code == 1 and "cannot be read from row" in result.output
    assert "nothing was changed" in result.output and table_rows() == before


@pytest.mark.parametrize("written", ["14:30", "2:30 PM", "14:30:00", "0.6041666667"])
def test_the_time_construction_started_is_read_as_a_spreadsheet_writes_it(app, runner, tmp_path, make, written):
    make.town()
    db.session.commit()
    row = permit_row("LM-7") | {"construction_started_on": "2026-06-03", "construction_started_time": written}
    path = write_csv(tmp_path / "permits.csv", [row])
    result = runner.invoke(args=["import", "permits", str(path), "--apply"])
    assert result.exit_code == 0, result.output
    permit = db.session.scalar(select(Permit).where(Permit.number == "LM-7"))
    assert permit.construction_started_at == dt.datetime(2026, 6, 3, 18, 30, tzinfo=dt.UTC)  # 2:30 PM EDT


def test_a_time_construction_started_with_no_day_or_unreadable_is_refused(app, runner, tmp_path, make):
    make.town()
    db.session.commit()
    rows = [permit_row("LM-8") | {"construction_started_time": "07:30"},
            permit_row("LM-9") | {"construction_started_on": "2026-06-03", "construction_started_time": "noonish"}]
    result = runner.invoke(args=["import", "permits", str(write_csv(tmp_path / "permits.csv", rows)), "--apply"])
    assert result.exit_code == 1
    assert "Give the day construction started first." in result.output
    assert "'noonish' is not a time of day: write it as HH:MM" in result.output
    assert db.session.scalar(select(func.count()).select_from(Permit)) == 0


@pytest.mark.parametrize(("written", "kept"), [("$25,000.00", Decimal("25000.00")), ("25,000", Decimal("25000.00")),
                                               ("$ 1500", Decimal("1500.00"))])
def test_a_surety_written_as_dollars_is_read_as_its_amount(app, runner, tmp_path, make, written, kept):
    # "$25,000.00" was refused twice: "Not a valid decimal value." and a range message that was not true.
    make.town()
    db.session.commit()
    path = write_csv(tmp_path / "permits.csv", [permit_row("LM-5") | {"surety_amount": written}])
    result = runner.invoke(args=["import", "permits", str(path), "--apply"])
    assert result.exit_code == 0, result.output
    assert db.session.scalar(select(Permit.surety_amount).where(Permit.number == "LM-5")) == kept


def test_a_surety_that_is_no_amount_gets_one_message(app, runner, tmp_path, make):
    make.town()
    db.session.commit()
    path = write_csv(tmp_path / "permits.csv", [permit_row("LM-6") | {"surety_amount": "$25,00,0"}])
    result = runner.invoke(args=["import", "permits", str(path), "--apply"])
    assert result.exit_code == 1 and "Not a valid decimal value." in result.output
    assert "The surety must be between" not in result.output


def test_a_permit_made_active_in_the_app_is_unchanged_by_its_own_exported_row(app, runner, tmp_path, make):
    # Its start keeps its seconds; the file writes HH:MM: read as a change, the start rewritten, audited again.
    from inspect_app.permits import services as permits
    from inspect_app.types import local

    make.town()
    db.session.commit()
    first = runner.invoke(args=["import", "permits", str(write_csv(tmp_path / "a.csv", [permit_row("LM-1")])),
                                "--apply"])
    assert first.exit_code == 0, first.output
    permit = db.session.scalar(select(Permit).where(Permit.number == "LM-1"))
    permits.change_status(None, permit, "active")  # §380-2: started now, to the microsecond
    db.session.commit()
    started = local(permit.construction_started_at)
    # What `flask export` writes for it (transfer/export.py): the day, and the time as HH:MM.
    row = permit_row("LM-1", construction_started_on=f"{started:%Y-%m-%d}",
                     construction_started_time=f"{started:%H:%M}")
    again = runner.invoke(args=["import", "permits", str(write_csv(tmp_path / "b.csv", [row]))])
    assert "0 to update, 1 unchanged" in again.output, again.output
