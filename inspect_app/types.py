"""Column types and helpers shared by every domain's models."""
from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import uuid
from zoneinfo import ZoneInfo

from sqlalchemy import DateTime
from sqlalchemy.types import TypeDecorator

# The one home of the town's time zone: a profile's `timezone` defaults to it (profiles/schema.py) and every
# Massachusetts town's profile keeps it. Code with a permit in hand asks its profile (`rules.calendar.zone`);
# code without one (a form's local time, a template's date, the rainfall day) uses LOCAL_TZ.
TOWN_TIMEZONE = "America/New_York"
LOCAL_TZ = ZoneInfo(TOWN_TIMEZONE)
_UUID_TEXT = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def new_id() -> str:
    """A fresh UUID4 as text; devices make the same kind offline."""
    return str(uuid.uuid4())


def canonical_uuid(value: object) -> str:
    """A UUID in its one text form (lower case, hyphenated), so an id sent in upper case is the same id.

    ValueError unless `value` is a UUID written as 36 characters (8-4-4-4-12 hex digits).
    """
    if not isinstance(value, str) or len(value) != 36 or value.count("-") != 4:
        raise ValueError("Must be a UUID, as text.")
    if _UUID_TEXT.fullmatch(value):  # laid out as it should be (nearly always): its lower case is its form
        return value.lower()
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise ValueError("Must be a UUID, as text.") from None


def utcnow() -> dt.datetime:
    """The current time, timezone-aware in UTC."""
    return dt.datetime.now(dt.UTC)


class UTCDateTime(TypeDecorator):
    """Stores aware datetimes as UTC and gives them back aware, on SQLite and PostgreSQL alike."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: store times as aware UTC")
        value = value.astimezone(dt.UTC)
        # SQLite keeps no zone: store naive UTC there.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value, dialect):
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC)


def local(value: dt.datetime | None, tz: ZoneInfo = LOCAL_TZ) -> dt.datetime | None:
    """A stored UTC time in the town's local time, for display."""
    return value.astimezone(tz) if value else None


def choice(name: str, *values: str):
    """A short text column limited to `values`, checked by the database on SQLite and PostgreSQL."""
    from sqlalchemy import Enum

    return Enum(*values, name=name, native_enum=False, create_constraint=True, validate_strings=True,
                length=max(len(v) for v in values))


def canonical_json(record: object) -> bytes:
    """One byte-exact JSON text for what is hashed (a record, an audit entry): sorted keys, no spaces,
    UTF-8, times in UTC ISO 8601."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=json_value).encode("utf-8")


def json_value(value: object) -> str:
    """The canonical JSON form of a value json cannot write, for records and audit entries that are hashed:
    datetimes in UTC ISO form (a naive one is UTC, as SQLite stores it), dates ISO, decimals exact."""
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC).isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} has no canonical JSON form")
