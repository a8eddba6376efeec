"""Form fields for numbers and dates that refuse what a column or the calendar cannot hold.

WTForms reads "9" * 400 as an integer, "NaN" and "1e309" as numbers and 9999-12-31 as a date; each then
fails later (a validator comparing with a float, a database column, a date plus a deadline), as a 500.
These fields refuse such values while reading them, with a plain message beside the field.
Use them instead of WTForms' own (same names, same arguments). `Email` is WTForms' check that remembers the
addresses it accepted (an import checks the same address on many rows).
"""
from __future__ import annotations

import datetime as dt
import decimal
import re
import math

from wtforms import SelectChoice, fields, validators

from inspect_app import labels
from inspect_app.types import LOCAL_TZ

# What <input type="datetime-local"> sends (minutes, no seconds).
DATETIME_LOCAL = "%Y-%m-%dT%H:%M"
# Dates the app has any business with: records from the last century to well past any permit.
FIRST_YEAR, LAST_YEAR = 1900, 2199
# Every amount, area and count the app keeps is far below this (and it fits the columns).
LARGEST = 10**12


def label_choices(of: str) -> list[SelectChoice]:
    """A select's or radio group's choices: the label set `of` (see `inspect_app.labels`), in order."""
    return [SelectChoice(value, words) for value, words in labels.choices(of)]


def _check_year(value: dt.date | None) -> None:
    if value is not None and not FIRST_YEAR <= value.year <= LAST_YEAR:
        raise ValueError(f"Enter a date between {FIRST_YEAR} and {LAST_YEAR}.")


def in_calendar(value):
    """`value` (a date or an aware time, from a form or a sync payload) if its year is one the app takes;
    ValueError naming the years otherwise: 9999-12-31T23:59-05:00 is past the last moment UTC can hold."""
    _check_year(value)
    return value


def check_local_moment(value: dt.datetime | None) -> None:
    """A time typed in the town's time (naive) that its clocks skipped, the hour they go forward in March, is
    refused: 2:30 AM that night names no moment, and Python would move it by an hour without a word."""
    _check_year(value)
    if value is None or value.tzinfo is not None:
        return
    moment = value.replace(tzinfo=LOCAL_TZ)
    if moment.astimezone(dt.UTC).astimezone(LOCAL_TZ).replace(tzinfo=None) != value:
        gap_ends = value.replace(minute=0) + dt.timedelta(hours=1)
        raise ValueError(f"There was no {value:%-I:%M %p} on {value:%b %-d, %Y}: the clocks went forward at "
                         f"{value:%-I}:00 AM. Enter a time before then, or from {gap_ends:%-I:%M %p}.")


def local_datetime(text: str, unreadable: str = "Enter a date and time.") -> dt.datetime:
    """A `datetime-local` value typed in the town's time, as aware UTC: what DateTimeLocalField reads, for a
    form parsed by hand (the report). ValueError with the words to show beside the field: `unreadable`, or
    the years allowed (9999-12-31T23:59 in Massachusetts is past the last moment UTC can hold)."""
    try:
        value = dt.datetime.strptime(text.strip(), DATETIME_LOCAL)
    except ValueError:
        raise ValueError(unreadable) from None
    check_local_moment(value)
    return value.replace(tzinfo=LOCAL_TZ).astimezone(dt.UTC)


def _check_number(value) -> None:
    if value is None:
        return
    if isinstance(value, (float, decimal.Decimal)) and not math.isfinite(value):
        raise ValueError("Enter a number.")
    if abs(value) >= LARGEST:
        raise ValueError(f"Enter a number smaller than {LARGEST:,}.")


class _Bounded:
    """Runs the field's own parsing, then the check; a refused value leaves `data` empty."""

    check = staticmethod(lambda value: None)

    def process_formdata(self, valuelist):
        super().process_formdata(valuelist)
        try:
            self.check(self.data)
        except ValueError:
            self.data = None
            raise


class IntegerField(_Bounded, fields.IntegerField):
    check = staticmethod(_check_number)


class FloatField(_Bounded, fields.FloatField):
    check = staticmethod(_check_number)


class DecimalField(_Bounded, fields.DecimalField):
    check = staticmethod(_check_number)

    def process_formdata(self, valuelist):
        try:
            super().process_formdata(valuelist)
        except decimal.InvalidOperation:  # "sNaN" and friends
            self.data = None
            raise ValueError("Enter a number.") from None


class MoneyField(DecimalField):
    """An amount of US dollars, as people write one: "$25,000.00" is 25000.00 (it was "Not a valid decimal value",
    and a range message beside it that was not true)."""

    def process_formdata(self, valuelist):
        if valuelist and isinstance(valuelist[0], str) and _MONEY.fullmatch(valuelist[0].strip()):
            valuelist = [valuelist[0].strip().lstrip("$").strip().replace(",", ""), *valuelist[1:]]
        super().process_formdata(valuelist)

    def validate(self, form, extra_validators=()) -> bool:
        if self.process_errors and self.raw_data and str(self.raw_data[0]).strip():
            # No amount read from what was written: that alone is said (its range is nothing to check). An empty
            # one goes through the chain, whose Optional() lets it be.
            self.errors = list(self.process_errors)
            return False
        return super().validate(form, extra_validators)


_MONEY = re.compile(r"\$?\s*\d{1,3}(,\d{3})+(\.\d+)?|\$\s*\d+(\.\d+)?")


class DateField(_Bounded, fields.DateField):
    check = staticmethod(_check_year)


class DateTimeLocalField(_Bounded, fields.DateTimeLocalField):
    check = staticmethod(check_local_moment)


class Email(validators.Email):
    """WTForms' Email check (same arguments, same messages), remembering the addresses it has accepted: a
    town's permits file gives the same applicant's address on row after row, and the check (email_validator)
    costs more than the rest of the row's fields. An address refused is checked again each time."""

    REMEMBERED = 4096

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._accepted: set[str] = set()

    def __call__(self, form, field) -> None:
        if field.data in self._accepted:
            return
        super().__call__(form, field)
        if len(self._accepted) >= self.REMEMBERED:
            self._accepted.clear()
        self._accepted.add(field.data)
