"""Spreadsheets for the import tests, written as a town's would be: CSV in a chosen encoding, or a workbook."""
from __future__ import annotations

import csv
import io
import zipfile
from pathlib import Path

from openpyxl import Workbook
from sqlalchemy import select

from inspect_app.extensions import db

PERMIT_HEADER = ["town", "permit_number", "site_address", "parcel_id", "latitude", "longitude", "owner_name",
                 "owner_email", "applicant_name", "applicant_email", "engineer_email", "issued_on", "disturbed_acres",
                 "cgp_schedule", "sensitive_waters", "sensitive_waters_note", "structures"]


def permit_row(number: str = "LM-SWM-1", **cells) -> dict[str, str]:
    """A good row of a permits file; `cells` change or add columns."""
    row = {"town": "longmeadow", "permit_number": number, "site_address": "123 Maple Road, Longmeadow, MA",
           "parcel_id": "12-34-5", "latitude": "42.0501", "longitude": "-72.5823", "owner_name": "Maple Road LLC",
           "owner_email": "", "applicant_name": "Maple Road LLC", "applicant_email": "applicant@example.org",
           "engineer_email": "", "issued_on": "2024-04-01", "disturbed_acres": "2.4", "cgp_schedule": "every_7_days",
           "sensitive_waters": "no", "sensitive_waters_note": "", "structures": ""}
    row.update(cells)
    return row


def write_csv(path: Path, rows: list[dict[str, str]], encoding: str = "utf-8",
              header: list[str] | None = None) -> Path:
    header = header or list(rows[0])
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    for row in rows:
        writer.writerow([row.get(name, "") for name in header])
    path.write_bytes(out.getvalue().encode(encoding))
    return path


def write_xlsx(path: Path, sheets: dict[str, list[list]]) -> Path:
    """A workbook of sheets, each a list of rows (the first the header); a str starting "=" is a formula."""
    workbook = Workbook()
    workbook.remove(workbook.active)
    for title, rows in sheets.items():
        sheet = workbook.create_sheet(title)
        for row in rows:
            sheet.append(row)
    workbook.save(path)
    return path


def table_rows() -> dict[str, list]:
    """Every row of every table: equal before and after means the database did not change."""
    found = {}
    for table in db.metadata.sorted_tables:
        found[table.name] = sorted(repr(tuple(row)) for row in db.session.execute(select(table)))
    return found


def damaged_workbook(tmp_path) -> bytes:
    """A workbook of three permits whose sheet is cut off inside row 3, as a broken save or copy leaves it: the
    zip itself is whole."""
    good = write_xlsx(tmp_path / "good.xlsx", {"permits": [PERMIT_HEADER] + [
        [permit_row(f"LM-{n}")[h] for h in PERMIT_HEADER] for n in range(1, 4)]})
    out = io.BytesIO()
    with zipfile.ZipFile(good) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                data = data[:data.index(b'<row r="3"') + 20]
            target.writestr(item, data)
    return out.getvalue()
