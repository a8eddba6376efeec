"""What an import says about each row, and reading the values of a row's cells: days, yes/no, towns.

An import is a stream of events: a `Problem` (row, column, message), an `Outcome` (what the row makes: a new
record, an update naming the columns that change, or nothing new), and `Progress`. The command and the admin
page show the same stream; a `Tally` counts it.
"""
from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass, field


from inspect_app.fields import FIRST_YEAR, LAST_YEAR
from inspect_app.permits.models import Jurisdiction
from inspect_app.transfer.sheets import Row

# What a row's outcome can be.
CREATE, UPDATE, UNCHANGED = "create", "update", "unchanged"
# Spreadsheet day numbers (days since 1899-12-30, as Excel counts) of the days the app accepts.
_SERIALS = (1, 109_574)
_DAY_FORMATS = ("%Y-%m-%d", "%m/%d/%Y", "%m/%d/%y", "%Y/%m/%d", "%b %d, %Y", "%B %d, %Y", "%d-%b-%Y", "%d-%b-%y")
YES = frozenset({"yes", "y", "true", "1", "x"})
NO = frozenset({"no", "n", "false", "0", ""})


@dataclass(frozen=True)
class Problem:
    """Why a row (or, with row None, the whole file) cannot be imported."""

    row: int | None
    column: str
    message: str


@dataclass(frozen=True)
class Notice:
    """Something worth knowing that changes nothing (a column the import reads past)."""

    message: str


@dataclass(frozen=True)
class Outcome:
    """What a row would do, or did: create a record, update the columns named, or change nothing."""

    row: int
    action: str
    record: str
    changes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Invited:
    """A new account made by an applied import: its owner is sent the link once the import is committed."""

    user_id: str


@dataclass(frozen=True)
class Progress:
    """Rows read so far (of the main file; structures rows after it)."""

    rows: int


@dataclass
class Tally:
    """The counts of an import's events, and the first problems and outcomes to show."""

    shown: int = 500
    problems: list[Problem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    invited: list[str] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    problem_count: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {CREATE: 0, UPDATE: 0, UNCHANGED: 0})
    rows: int = 0

    def add(self, event) -> None:
        if isinstance(event, Problem):
            self.problem_count += 1
            if len(self.problems) < self.shown:
                self.problems.append(event)
        elif isinstance(event, Outcome):
            self.counts[event.action] += 1
            if event.action != UNCHANGED and len(self.outcomes) < self.shown:
                self.outcomes.append(event)
        elif isinstance(event, Invited):
            self.invited.append(event.user_id)
        elif isinstance(event, Notice):
            self.notices.append(event.message)
        elif isinstance(event, Progress):
            self.rows = max(self.rows, event.rows)

    @property
    def ok(self) -> bool:
        return self.problem_count == 0


def cell_problems(row: Row) -> list[Problem]:
    """The cells no column may hold: a formula (read as its text, never worked out) or a NUL character."""
    found = []
    for column, cell in row.cells.items():
        if cell.formula:
            found.append(Problem(row.number, column, f"holds a formula ({_short(cell.text)}); formulas are read as "
                                                     "text and never worked out: put the value itself in the cell."))
        elif "\x00" in cell.text:
            found.append(Problem(row.number, column, "holds a NUL character (\\0), which cannot be stored."))
    return found


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


@functools.lru_cache(maxsize=4096)  # a file repeats its days: each is read once
def parse_day(text: str) -> dt.date | None:
    """A day as a spreadsheet gives it: YYYY-MM-DD, M/D/YYYY, "Apr 1, 2024", a date and time, or a spreadsheet
    day number (45383 is 2024-04-01); None for an empty cell. ValueError says what to write instead."""
    text = text.strip()
    if not text:
        return None
    if re.fullmatch(r"\d+(\.0+)?", text):
        serial = int(float(text))
        if _SERIALS[0] <= serial <= _SERIALS[1]:
            # openpyxl, and the numpy it imports, only where a spreadsheet is read or made: never in a worker at start
            from openpyxl.utils.datetime import from_excel
            return from_excel(serial).date()
    else:
        day_part = text.split(" ")[0] if re.fullmatch(r"\S+ \d{1,2}:\d{2}(:\d{2})?", text) else text
        for form in _DAY_FORMATS:
            try:
                day = dt.datetime.strptime(day_part, form).date()
            except ValueError:
                continue
            if FIRST_YEAR <= day.year <= LAST_YEAR:
                return day
            break
    raise ValueError(f"{_short(text)!r} is not a day between {FIRST_YEAR} and {LAST_YEAR}: write it as YYYY-MM-DD, "
                     "e.g. 2024-04-01.")


def parse_time(text: str) -> dt.time | None:
    """A time of day as a spreadsheet gives it: 14:30, 2:30 PM, 14:30:00, or a spreadsheet's fraction of a day
    (0.6041666 is 14:30); None for an empty cell. ValueError says what to write instead."""
    text = text.strip()
    if not text:
        return None
    if re.fullmatch(r"0?\.\d+", text):
        minutes = round(float(text) * 24 * 60)
        if minutes < 24 * 60:
            return dt.time(minutes // 60, minutes % 60)
    for form in ("%H:%M", "%H:%M:%S", "%I:%M %p", "%I:%M%p", "%I:%M:%S %p"):
        try:
            return dt.datetime.strptime(text.upper(), form).time().replace(second=0)
        except ValueError:
            continue
    raise ValueError(f"{_short(text)!r} is not a time of day: write it as HH:MM on the town's clock, e.g. 07:30.")


def parse_yes_no(text: str) -> bool:
    """yes/no, true/false, 1/0, y/n or x (empty is no); ValueError otherwise."""
    word = text.strip().lower()
    if word in YES:
        return True
    if word in NO:
        return False
    raise ValueError(f"{_short(text)!r} is not yes or no.")


class Towns:
    """The towns an import may name, by profile key or name; `only` is the one town a town's admin imports into."""

    def __init__(self, jurisdictions: Iterable[Jurisdiction], only: str | None = None,
                 default: Jurisdiction | None = None) -> None:
        self.all = list(jurisdictions)
        self.by_word = {}
        for town in self.all:
            self.by_word[town.profile_key.lower()] = town
            self.by_word[town.name.lower()] = town
            self.by_word[town.name.lower().removeprefix("town of ").strip()] = town
        self.only = next((t for t in self.all if t.id == only), None) if only else None
        self.default = self.only or default

    def find(self, text: str) -> Jurisdiction:
        """The town a cell names (or the default for an empty cell); ValueError says which towns there are."""
        word = text.strip().lower()
        if not word:
            if self.default is None:
                raise ValueError("Name the town (" + self.names() + "), or import for one town.")
            return self.default
        town = self.by_word.get(word)
        if town is None:
            raise ValueError(f"{_short(text)!r} is not a town here; the towns are {self.names()}.")
        if self.only is not None and town.id != self.only.id:
            raise ValueError(f"You import into {self.only.name} only.")
        return town

    def names(self) -> str:
        return ", ".join(f"{t.profile_key} ({t.name})" for t in self.all)
