"""Exports for the towns' calendars and GIS: iCalendar (RFC 5545), GeoJSON (RFC 7946) and CSV."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
from collections.abc import Callable, Iterable

from inspect_app.labels import OBLIGATION_KIND_LABELS
from inspect_app.pages.dashboard.services import PermitStatus, Row, SitePlace

_ICAL_ESCAPES = str.maketrans({"\\": "\\\\", ";": "\\;", ",": "\\,", "\n": "\\n", "\r": ""})
# Spreadsheet programs run a cell that starts with one of these as a formula.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _ical_text(value: str) -> str:
    """A TEXT value escaped as RFC 5545 §3.3.11 requires."""
    return value.translate(_ICAL_ESCAPES)


def _ical_time(at: dt.datetime) -> str:
    """A DATE-TIME in UTC ("form #2", RFC 5545 §3.3.5)."""
    return at.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")


def _fold(line: str) -> str:
    """Split a content line into lines of at most 75 octets, continuations starting with a space (§3.1)."""
    data = line.encode("utf-8")
    if len(data) <= 75:
        return line
    parts, current, limit = [], b"", 75
    for char in line:
        encoded = char.encode("utf-8")
        if len(current) + len(encoded) > limit:
            parts.append(current.decode("utf-8"))
            current, limit = b"", 74  # a continuation line begins with one space
        current += encoded
    parts.append(current.decode("utf-8"))
    return "\r\n ".join(parts)


def icalendar(name: str, rows: Iterable[Row], now: dt.datetime, link: Callable[[str], str], host: str) -> str:
    """A calendar with one event at the deadline of each inspection due, overdue or upcoming."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Stormwater Inspections//Schedule engine//EN",
             "CALSCALE:GREGORIAN", "METHOD:PUBLISH", f"X-WR-CALNAME:{_ical_text(name)}"]
    for row in rows:
        ob, permit = row.obligation, row.permit
        assert ob.due_at is not None
        what = OBLIGATION_KIND_LABELS.get(ob.kind, ob.kind)
        state = "OVERDUE: " if ob.status == "overdue" else ""
        # The same obligation keeps its UID, so a refreshed feed updates events instead of adding more; each of a
        # chain of the same duty (a routine inspection missed twice: two deadlines gone, the next to come) is an
        # obligation of its own, told by when it opened (RFC 5545 §3.8.4.7: a UID is unique).
        opened = _ical_time((ob.opens_at or ob.due_at).replace(microsecond=0))
        lines += [
            "BEGIN:VEVENT",
            f"UID:{_ical_text(f'{permit.id}.{ob.kind}.{ob.subject}.{opened}'.replace(':', '-'))}@{host}",
            f"DTSTAMP:{_ical_time(now)}",
            # A deadline is an instant: an event with DTSTART and no end (RFC 5545 §3.6.1).
            f"DTSTART:{_ical_time(ob.due_at.replace(microsecond=0))}",
            f"SUMMARY:{_ical_text(f'{state}{what} due, permit {permit.number}')}",
            f"DESCRIPTION:{_ical_text(f'{ob.reason} ({ob.citation})')}",
            f"LOCATION:{_ical_text(permit.site_address)}",
            f"GEO:{permit.latitude:.6f};{permit.longitude:.6f}",
            f"URL:{link(permit.id)}",
            "END:VEVENT",
        ]
    lines.append("END:VCALENDAR")
    return "".join(_fold(line) + "\r\n" for line in lines)


def _point(feature_id: str, longitude: float, latitude: float, properties: dict) -> dict:
    """A Feature at one point: [longitude, latitude] (RFC 7946 §3.1.1)."""
    return {"type": "Feature", "id": feature_id, "geometry": {"type": "Point", "coordinates": [longitude, latitude]},
            "properties": properties}


def _place_properties(place: SitePlace) -> dict:
    properties = {"feature": place.feature, "permit": place.permit_number, "name": place.name}
    if place.feature == "structure":
        return properties | {"kind": place.status}
    clock = place.clock
    return properties | {
        "status": place.status,
        # The area's next stabilization deadline as the schedule engine stored it (§380-11 C(3)(a)).
        "stabilization": OBLIGATION_KIND_LABELS[clock.kind] if clock else None,
        "stabilization_due": clock.due_at.isoformat() if clock and clock.due_at else None,
        "stabilization_status": clock.status if clock else None,
    }


def geojson(statuses: Iterable[PermitStatus], link: Callable[[str], str], places: Iterable[SitePlace] = ()) -> str:
    """A FeatureCollection of the permits' points with their status, then the points of their disturbed
    areas (with their stabilization clocks) and structures; `properties.feature` says which each is."""
    features = [_point(item.permit.id, item.permit.longitude, item.permit.latitude,
                       {"feature": "permit"} | _properties(item) | {"url": link(item.permit.id)})
                for item in statuses]
    features += [_point(place.id, place.longitude, place.latitude, _place_properties(place)) for place in places]
    return json.dumps({"type": "FeatureCollection", "features": features}, separators=(",", ":"))


CSV_COLUMNS = ("permit", "town", "site_address", "latitude", "longitude", "status", "cgp_schedule", "issued_on",
               "construction_started_on", "inspectors", "due", "overdue", "next_deadline", "problem")


def _properties(item: PermitStatus) -> dict:
    permit = item.permit
    return {
        "permit": permit.number, "town": permit.town, "site_address": permit.site_address, "status": permit.status,
        "cgp_schedule": permit.cgp_schedule, "issued_on": permit.issued_on.isoformat(),
        "construction_started_on": permit.construction_started_on.isoformat() if permit.construction_started_on else None,
        "inspectors": "; ".join(permit.inspector_names), "due": item.due, "overdue": item.overdue,
        "next_deadline": item.next_due_at.isoformat() if item.next_due_at else None, "problem": item.problem,
    }


def _cell(value: object) -> object:
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value  # shown as text, never run as a formula
    return "" if value is None else value


def csv_text(statuses: Iterable[PermitStatus]) -> str:
    """One header line and one line per permit."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for item in statuses:
        values = _properties(item) | {"latitude": item.permit.latitude, "longitude": item.permit.longitude}
        writer.writerow([_cell(values[column]) if column not in ("latitude", "longitude") else values[column]
                         for column in CSV_COLUMNS])
    return out.getvalue()
