"""Builders for the rules tests: town profiles made in Python and permits with sensible defaults."""
from __future__ import annotations

import datetime as dt
from dataclasses import replace
from zoneinfo import ZoneInfo

from inspect_app.profiles.schema import Profile
from inspect_app.rules import Obligation, PermitFacts

ET = ZoneInfo("America/New_York")
UTC = dt.timezone.utc
THRESHOLD_MM = 6.35  # 0.25 in


def et(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> dt.datetime:
    """A wall-clock time in Massachusetts, as UTC."""
    return dt.datetime(year, month, day, hour, minute, tzinfo=ET).astimezone(UTC)


def end_of(year: int, month: int, day: int) -> dt.datetime:
    """The last instant of a Massachusetts calendar day, as UTC."""
    return dt.datetime(year, month, day, 23, 59, 59, 999999, tzinfo=ET).astimezone(UTC)


def _types(pre_bury: str, walk_through: str) -> list[dict]:
    def kind(key: str, citation: str) -> dict:
        item = {"key": "done", "text": "Done as required", "citation": citation}
        return {"key": key, "name": key.replace("_", " "), "when": "as the rule says", "citation": citation,
                "checklist": [item]}

    return [kind("initial", "§380-16 C(4)(a)"), kind("erosion_control", "§380-16 C(4)(b)"),
            kind("pre_bury", pre_bury), kind("walk_through", walk_through), kind("final", "§380-16 C(4)(e)"),
            kind("periodic", "§380-16 C(4)(f)")]


def longmeadow(**changes: object) -> Profile:
    """A Longmeadow-like profile: start within 2 years, 7-day stabilization, 30-day cure."""
    data: dict = {
        "key": "longmeadow", "town": "Longmeadow", "state": "MA", "timezone": "America/New_York",
        "regulation": "Ch. 380", "authority_title": "DPW Director", "authority_body": "Department of Public Works",
        "registry_of_deeds": "Hampden County Registry of Deeds",
        "stabilization": {"days": 7, "citation": "§380-11 C(3)(a): stabilize within seven days of ceasing"},
        "advance_notice": {"hours": 24, "citation": "§380-16 C(3)"},
        "storm": {"threshold_mm": THRESHOLD_MM, "citation": "CGP 2022 Part 4"},
        "permit_clock": {"kind": "start_within", "years": 2, "citation": "§380-10 K: begin within two years"},
        "om_certification": {"months": 12, "citation": "§380-14 C(2)(l): annual certification"},
        "cure_period": {"days": 30, "citation": "§380-14 E: corrections within 30 days"},
        "holidays": [],  # the US-MA legal holidays come from the holidays package
        "inspection_types": _types("§380-16 C(4)(c)", "§380-16 C(4)(d)"),
    }
    data.update(changes)
    return Profile.model_validate(data)


def southborough() -> Profile:
    """A Southborough-like profile: lapse after 3 years, 1-year extension asked 30 days ahead (§9.7)."""
    return longmeadow(
        key="southborough", town="Southborough", authority_title="Conservation Commission",
        permit_clock={"kind": "lapse_after", "years": 3, "extension_years": 1, "extension_request_days_before": 30,
                      "citation": "§9.7: lapse after three years; extension asked 30 days ahead"},
    )


def permit(**changes: object) -> PermitFacts:
    """An issued Longmeadow permit; pass fields to change."""
    base = PermitFacts(id=1, number="LM-2025-001", status="issued", cgp_schedule="every_7_days",
                       issued_at=et(2025, 3, 3, 9))
    return replace(base, **changes)


def find(items: list[Obligation], kind: str, subject: str | None = None) -> list[Obligation]:
    """The obligations of one kind (and subject)."""
    return [o for o in items if o.kind == kind and (subject is None or o.subject == subject)]


def one(items: list[Obligation], kind: str, subject: str | None = None) -> Obligation:
    """The single obligation of one kind (and subject); fails if there are none or several."""
    found = find(items, kind, subject)
    assert len(found) == 1, f"expected one {kind} {subject or ''}, got {found}"
    return found[0]
