"""The words a report uses for why and when it was made (issue 20; CGP 2022 Part 4.7.1): one home for the
page, the PDF and the email, so they cannot drift apart. Pure: stored values and a time zone in, text out.
"""
from __future__ import annotations

import datetime as dt
from typing import Any
from zoneinfo import ZoneInfo

from inspect_app.labels import label
from inspect_app.units import inches_and_mm

_TIME = "%b %-d, %Y %-I:%M %p %Z"


def _time(iso: str | None, tz: ZoneInfo) -> str | None:
    return dt.datetime.fromisoformat(iso).astimezone(tz).strftime(_TIME) if iso else None


def storm_words(storm: dict[str, Any], tz: ZoneInfo) -> str:
    """One storm as a report prints it: total, start, end, duration and source.

    `Storm of 0.62 in (15.7 mm): began Jun 10, 2026 2:00 PM EDT, ended Jun 11, 2026 2:00 AM EDT (12 h);
    weather station 72509`.
    """
    total = inches_and_mm(storm.get("depth_mm"))
    source = label(storm.get("source"), "storm_source")
    if storm.get("source") == "gauge":
        return f"Storm of {total}: read on the on-site rain gauge at {_time(storm.get('ended_at'), tz)} (24 hours)"
    if storm.get("station_id"):
        source += f" {storm['station_id']}"
    began, ended = _time(storm.get("started_at"), tz), _time(storm.get("ended_at"), tz)
    if began is None or ended is None:  # a storm day of the old record: a calendar day's total
        day = dt.date.fromisoformat(storm["day"]).strftime("%b %-d, %Y") if storm.get("day") else "—"
        return f"Storm of {total} on {day}; {source}"
    hours = storm.get("duration_hours")
    duration = f" ({hours:g} h)" if hours is not None else ""
    return f"Storm of {total}: began {began}, ended {ended}{duration}; {source}"


def storms_since_words(storms: dict[str, Any] | None, tz: ZoneInfo) -> list[str]:
    """Every storm since the previous report, one line each; one line saying so when there was none."""
    found = (storms or {}).get("since_last") or []
    return [storm_words(s, tz) for s in found] or ["No storm event since the previous report"]


def why_words(trigger: str | None, storms: dict[str, Any] | None, tz: ZoneInfo) -> str:
    """The trigger, with the storm a storm-event inspection answers."""
    words = label(trigger, "trigger", "Not stated")
    linked = (storms or {}).get("linked")
    if trigger == "storm_event" and linked:
        words += f": {storm_words(linked, tz)}"
    return words


def schedule_words(schedule: dict[str, str] | None) -> str:
    """The schedule in force, with its rule: `At least every 7 calendar days (CGP 2022 Part 4.2)`."""
    if not schedule:
        return "—"
    return f"{schedule['text']} ({schedule['citation']})"


def inspector_words(name: str, credentials: str | None, title: str | None, organization: str | None,
                    contact: str | None) -> str:
    """Name and credentials, then title, company and contact where the account has them."""
    return ", ".join(part for part in (name, credentials, title, organization, contact) if part)


def when_words(started: dt.datetime, ended: dt.datetime | None, tz: ZoneInfo) -> str:
    """`Jun 11, 2026 9:00 AM EDT to 10:30 AM EDT`."""
    start = started.astimezone(tz).strftime(_TIME)
    if ended is None:
        return f"{start}; end time not recorded"
    end = ended.astimezone(tz)
    same_day = end.date() == started.astimezone(tz).date()
    return f"{start} to {end.strftime('%-I:%M %p %Z' if same_day else _TIME)}"


def amendment_words(signer: str | None, original_signer: str | None) -> str:
    """`amendment by Casey Cole of a report by Dana Whitfield`: who signed an amendment, and whose report it
    corrects, for an amendment signed by someone other than the original's signer (SPEC *Signatures*)."""
    return f"amendment by {signer or '—'} of a report by {original_signer or '—'}"
