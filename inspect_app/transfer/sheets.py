"""Reading a town's spreadsheet a row at a time: CSV (UTF-8, UTF-8 with a BOM, or Windows-1252) or an Excel
workbook (.xlsx, read with openpyxl in read-only mode), in bounded memory whatever its length.

Every cell comes out as text (`Cell`), as a person sees it: a number as written, a date as YYYY-MM-DD, a
formula as its own text (`=A2*2`, never worked out: the workbook is read with data_only=False), flagged so
the importer can refuse it. Nothing here knows what a column means.
"""
from __future__ import annotations

import codecs
import csv
import datetime as dt
import io
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


from inspect_app.transfer.columns import header_key

# The sheet (of a workbook) or file that holds the structures when they are not a list in the permits' rows.
STRUCTURES_SHEET = "structures"
# What a damaged workbook raises as it is opened or read: a broken zip or deflate stream, a part missing, XML cut
# off (ElementTree's ParseError and lxml's are SyntaxErrors), a value openpyxl cannot read.
UNREADABLE = (zipfile.BadZipFile, zlib.error, EOFError, KeyError, OSError, ValueError, SyntaxError)
_CHUNK = 1 << 16


class FileProblem(ValueError):
    """The file as a whole cannot be read (not a spreadsheet, an unknown encoding, no header row)."""


@dataclass(frozen=True)
class Cell:
    """A cell's text, and whether it held a formula (its text is then the formula)."""

    text: str
    formula: bool = False


@dataclass(frozen=True)
class Row:
    """A row of data: its number as the spreadsheet shows it (the header is row 1), its cells by header key."""

    number: int
    cells: dict[str, Cell]

    def text(self, column: str) -> str:
        cell = self.cells.get(column)
        return cell.text if cell else ""


@dataclass
class Sheet:
    """A table being read: its header keys (in order), the headers as written, and its rows (read once)."""

    name: str
    keys: list[str]
    headers: list[str]
    rows: Iterator[Row]


def kind_of(filename: str) -> str:
    """"csv" or "xlsx", from the file's name; anything else is refused."""
    suffix = Path(filename).suffix.lower()
    if suffix in (".csv", ".txt"):
        return "csv"
    if suffix in (".xlsx", ".xlsm"):
        return "xlsx"
    raise FileProblem(f"{Path(filename).name or 'The file'} is neither a .csv nor an .xlsx file: save the "
                      "spreadsheet as CSV or as an Excel workbook (.xlsx).")


def csv_encoding(path: Path) -> str:
    """The file's encoding: UTF-16 or UTF-8 with their byte-order mark, else UTF-8 if every byte of it is, else
    Windows-1252 (what Excel on Windows writes for "CSV"); read in chunks, so a large file costs no memory."""
    with open(path, "rb") as stream:
        start = stream.read(4)
        if start.startswith(codecs.BOM_UTF8):
            return "utf-8-sig"
        if start.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
            return "utf-16"
        stream.seek(0)
        for encoding in ("utf-8", "cp1252"):
            decoder = codecs.getincrementaldecoder(encoding)()
            try:
                while chunk := stream.read(_CHUNK):
                    decoder.decode(chunk)
                decoder.decode(b"", final=True)
            except UnicodeDecodeError:
                stream.seek(0)
                continue
            return encoding
    raise FileProblem("The file's text is neither UTF-8 nor Windows-1252: save it from the spreadsheet as "
                      "\"CSV UTF-8\".")


def open_sheets(path: Path, filename: str) -> tuple[Sheet, Sheet | None, callable]:
    """The main table of the file and, for a workbook, its "structures" sheet if it has one; and a function
    that closes the file."""
    if kind_of(filename) == "csv":
        stream = open(path, encoding=csv_encoding(path), newline="")
        try:
            return _csv_sheet(stream, Path(filename).stem), None, stream.close
        except FileProblem:
            stream.close()
            raise
    # openpyxl, and the numpy it imports, only where a spreadsheet is read or made: never in a worker at start
    from openpyxl import load_workbook
    # Opened here and handed over as a file: openpyxl refuses a path whose name does not end in .xlsx, and a
    # file uploaded on the admin page is stored under its SHA-256 alone.
    stream = open(path, "rb")
    try:
        workbook = load_workbook(stream, read_only=True, data_only=False)
    except UNREADABLE as error:
        stream.close()
        raise FileProblem(f"The workbook cannot be read ({error}): save it again from the spreadsheet as an "
                          "Excel workbook (.xlsx).") from None

    def close() -> None:
        workbook.close()
        stream.close()
    names = workbook.sheetnames
    structures_name = next((n for n in names if header_key(n) == STRUCTURES_SHEET), None)
    main_name = next((n for n in names if n != structures_name), None)
    if main_name is None:
        close()
        raise FileProblem("The workbook has no sheet of rows to import.")
    try:
        main = _xlsx_sheet(workbook[main_name], main_name)
        extra = _xlsx_sheet(workbook[structures_name], structures_name) if structures_name else None
    except FileProblem:
        close()
        raise
    return main, extra, close


def _header(values: list[str], where: str) -> tuple[list[str], list[str]]:
    headers = [value.strip() for value in values]
    while headers and not headers[-1]:
        headers.pop()
    if not any(headers):
        raise FileProblem(f"{where} has no header row: its first row must name the columns "
                          "(download the template).")
    return [header_key(h) for h in headers], headers


def _csv_sheet(stream, name: str) -> Sheet:
    # A spreadsheet set to a European locale saves "CSV" with semicolons (a comma is its decimal mark).
    first_line = stream.readline()
    stream.seek(0)
    delimiter = max((",", ";", "\t"), key=first_line.count)
    reader = csv.reader(stream, delimiter=delimiter)
    try:
        first = next(reader, None)
    except (csv.Error, UnicodeDecodeError) as error:
        raise FileProblem(f"The CSV file cannot be read: {error}.") from None
    if first is None:
        raise FileProblem("The file is empty.")
    keys, headers = _header(first, "The file")

    def rows() -> Iterator[Row]:
        number = 1
        try:
            for values in reader:
                number += 1
                if any(value.strip() for value in values):
                    yield Row(number, {key: Cell(value.strip()) for key, value in zip(keys, values) if key})
        except csv.Error as error:
            raise FileProblem(f"Row {number} of the CSV file cannot be read: {error}.") from None

    return Sheet(name, keys, headers, rows())


def _xlsx_sheet(worksheet, name: str) -> Sheet:
    cells = worksheet.iter_rows()
    try:
        first = next(cells, None)
    except UNREADABLE as error:
        raise FileProblem(_damaged(name, 1, error)) from None
    if first is None:
        raise FileProblem(f"The sheet {name!r} is empty.")
    keys, headers = _header([_cell(c).text for c in first], f"The sheet {name!r}")

    def rows() -> Iterator[Row]:
        # openpyxl reads a sheet's rows as they are asked for: a sheet cut off inside (a broken save or copy) is
        # found only here, row by row.
        index = 1
        try:
            for index, row in enumerate(cells, start=2):
                found = {key: _cell(cell) for key, cell in zip(keys, row) if key}
                if any(cell.text for cell in found.values()):
                    yield Row(index, found)
        except UNREADABLE as error:
            raise FileProblem(_damaged(name, index + 1, error)) from None

    return Sheet(name, keys, headers, rows())


def _damaged(sheet: str, row: int, error: Exception) -> str:
    return (f"The sheet {sheet!r} cannot be read from row {row} on ({error}): save it again from the spreadsheet "
            "as an Excel workbook (.xlsx).")


def _cell(cell) -> Cell:
    """A workbook cell as text: a formula as its text (flagged), a date as YYYY-MM-DD, a whole number without
    ".0", a number otherwise as Python writes it (the shortest text that reads back the same)."""
    value = getattr(cell, "value", None)
    if value is None:
        return Cell("")
    if getattr(cell, "data_type", None) == "f" or (isinstance(value, str) and value.startswith("=")):
        return Cell(str(value), formula=True)
    if isinstance(value, bool):
        return Cell("yes" if value else "no")
    if isinstance(value, dt.datetime):
        return Cell(value.date().isoformat() if value.time() == dt.time() else value.isoformat(sep=" "))
    if isinstance(value, (dt.date, dt.time)):
        return Cell(value.isoformat())
    if isinstance(value, float):
        return Cell(str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value))
    return Cell(str(value).strip())


def template_csv(columns) -> bytes:
    """A CSV template: the header row and one example row, UTF-8 with a BOM (so Excel reads its accents)."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([c.name for c in columns])
    writer.writerow([c.example for c in columns])
    return codecs.BOM_UTF8 + out.getvalue().encode("utf-8")
