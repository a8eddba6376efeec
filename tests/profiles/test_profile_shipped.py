"""The two built-in town profiles load and say what their regulations say."""
from __future__ import annotations

import calendar
import datetime as dt
import re

import pytest

from inspect_app.profiles import INSPECTION_TYPE_KEYS, load_profiles
from inspect_app.profiles.schema import short_citation
from inspect_app.rules.calendar import holidays_of, is_business_day


@pytest.fixture(scope="module")
def profiles():
    return load_profiles()


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date:
    first = dt.date(year, month, 1)
    return first + dt.timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))


def _last_weekday(year: int, month: int, weekday: int) -> dt.date:
    last = dt.date(year, month, calendar.monthrange(year, month)[1])
    return last - dt.timedelta(days=(last.weekday() - weekday) % 7)


def _massachusetts_holidays(year: int) -> set[dt.date]:
    """MGL c. 4 § 7 cl. 18 legal holidays, with a Sunday holiday also kept on the Monday after."""
    mon, thu = 0, 3
    days = {
        dt.date(year, 1, 1),
        _nth_weekday(year, 1, mon, 3),  # Martin Luther King Jr. Day
        _nth_weekday(year, 2, mon, 3),  # Washington's Birthday
        _nth_weekday(year, 4, mon, 3),  # Patriots' Day
        _last_weekday(year, 5, mon),  # Memorial Day
        dt.date(year, 6, 19),
        dt.date(year, 7, 4),
        _nth_weekday(year, 9, mon, 1),  # Labor Day
        _nth_weekday(year, 10, mon, 2),  # Columbus Day
        dt.date(year, 11, 11),
        _nth_weekday(year, 11, thu, 4),  # Thanksgiving Day
        dt.date(year, 12, 25),
    }
    return days | {day + dt.timedelta(days=1) for day in days if day.weekday() == 6}


def test_both_towns_and_the_cgp_baseline_ship(profiles):
    assert set(profiles) == {"longmeadow", "southborough", "cgp_baseline"}
    assert {profile.town for profile in profiles.values()} == {"Longmeadow", "Southborough", "CGP Baseline"}
    # A town with no local rules: only CGP numbers and no clause of either town's regulation.
    baseline = profiles["cgp_baseline"]
    assert "§" not in baseline.model_dump_json() and baseline.permit_clock is None


def test_longmeadow_numbers_follow_chapter_380(profiles):
    longmeadow = profiles["longmeadow"]
    assert longmeadow.authority_title == "DPW Director"
    assert longmeadow.authority_body == "Department of Public Works"
    assert longmeadow.registry_of_deeds == "Hampden County Registry of Deeds"
    assert longmeadow.stabilization.days == 7
    assert longmeadow.stabilization.citation.startswith("§380-11 C(3)(a)")
    assert longmeadow.advance_notice.hours == 24
    assert longmeadow.advance_notice.citation.startswith("§380-16 C(3)")
    assert longmeadow.storm.threshold_mm == pytest.approx(0.25 * 25.4)
    assert (longmeadow.permit_clock.kind, longmeadow.permit_clock.years) == ("start_within", 2)
    assert longmeadow.permit_clock.citation.startswith("§380-10 K")
    assert longmeadow.om_certification.months == 12
    assert longmeadow.om_certification.citation.startswith("§380-14 C(2)(l)")
    assert longmeadow.cure_period.days == 30
    assert longmeadow.cure_period.citation.startswith("§380-14 E")


def test_every_town_has_the_cgps_snowmelt_and_frozen_conditions_and_its_own_waiver_clause(profiles):
    """CGP 2022 Parts 4.2-4.3 (snowmelt): 3.25 in of snow; CGP 2022 Part 4.4 (frozen conditions): three months.
    §380-11 C(3)(f) "especially following any storm": Longmeadow's 7-day sites owe the storm inspection too."""
    for profile in profiles.values():
        assert profile.snowmelt.threshold_mm == pytest.approx(3.25 * 25.4)
        assert profile.frozen.min_months == 3 and profile.frozen.citation.startswith("CGP 2022 Part 4.4")
        assert profile.stabilization.inactive_days == 14
    longmeadow, southborough = profiles["longmeadow"], profiles["southborough"]
    assert longmeadow.storm.every_schedule and "especially following any storm" in longmeadow.storm.every_schedule_citation
    assert longmeadow.storm.every_schedule_citation.startswith("§380-11 C(3)(f)")
    assert not southborough.storm.every_schedule and not profiles["cgp_baseline"].storm.every_schedule
    assert longmeadow.waivers.citation.startswith("§380-8") and southborough.waivers.citation.startswith("§6.2")
    assert profiles["cgp_baseline"].waivers is None  # federal duties are not waivable
    assert "inspection" not in longmeadow.waivers.requirements
    assert longmeadow.surety.citation.startswith("§380-17 B") and southborough.surety.citation.startswith("§6.3")


def test_southborough_is_its_own_jurisdiction(profiles):
    southborough = profiles["southborough"]
    assert southborough.authority_title == "Conservation Commission"
    assert southborough.registry_of_deeds == "Worcester County Registry of Deeds"
    clock = southborough.permit_clock
    assert (clock.kind, clock.years, clock.extension_years, clock.extension_request_days_before) == (
        "lapse_after", 3, 1, 30
    )
    assert clock.citation.startswith("§9.7")


def test_southborough_says_where_borrowed_values_come_from(profiles):
    """A value the town text does not give must say so, and must name the rule it was taken from."""
    southborough = profiles["southborough"]
    borrowed = [
        southborough.stabilization, southborough.advance_notice, southborough.storm,
        southborough.om_certification, southborough.cure_period,
    ]
    for rule in borrowed:
        assert "silent" in rule.citation
        assert "Commission" in rule.citation or "CGP 2022" in rule.citation
    # Longmeadow's section numbers never appear in a Southborough document: not in any of its data.
    assert "§380" not in southborough.model_dump_json()


def test_longmeadow_citations_point_into_chapter_380_or_the_cgp(profiles):
    longmeadow = profiles["longmeadow"]
    # The six of the inspection program, §380-16 C(4)(a)-(f); the O&M facility inspection, §380-14 A(3).
    program = {key: f"§380-16 C(4)({letter})" for key, letter in zip(INSPECTION_TYPE_KEYS, "abcdef")}
    for kind in longmeadow.inspection_types:
        assert kind.citation.startswith(program.get(kind.key, "§380-14 A(3)"))
        for item in kind.checklist:
            sections = [int(number) for number in re.findall(r"§380-(\d+)", item.citation)]
            assert sections or "CGP 2022" in item.citation, item.key
            # Ch. 380 runs from §380-1 (purpose) to §380-20 (severability).
            assert all(1 <= number <= 20 for number in sections), item.citation


@pytest.mark.parametrize("town", ["longmeadow", "southborough"])
def test_inspection_program_asks_per_control_area_structure_and_pipe(profiles, town):
    profile = profiles[town]
    assert [kind.key for kind in profile.inspection_types] == list(INSPECTION_TYPE_KEYS)
    per = {kind.key: {item.per for item in kind.checklist} for kind in profile.inspection_types}
    assert {"control", "area"} <= per["erosion_control"]
    assert per["pre_bury"] == {"structure"}
    assert "pipe" in per["final"]
    # The O&M facility inspection answers each structure of the completed project (§380-14 A(3), §7.6 e)(1)).
    assert "structure" in per["om_facility"]
    pre_bury = {item.key for item in profile.inspection_type("pre_bury").checklist}
    assert {"size_as_designed", "invert_as_designed", "material_as_specified",
            "groundwater_separation", "photos_before_cover"} <= pre_bury
    final = {item.key for item in profile.inspection_type("final").checklist}
    assert {"pipe_video", "storm_performance", "as_built_drawings"} <= final
    assert "punch_list" in {item.key for item in profile.inspection_type("walk_through").checklist}


@pytest.mark.parametrize("town", ["longmeadow", "southborough"])
def test_holidays_are_the_massachusetts_legal_holidays(profiles, town):
    # Every year, not only the ones someone typed in: 2028 onwards too.
    days_off = holidays_of(profiles[town])
    for year in range(2026, 2032):
        for day in _massachusetts_holidays(year):
            assert not is_business_day(day, days_off), day
    assert dt.date(2027, 7, 5) in days_off  # July 4, 2027 is a Sunday: kept on the Monday
    assert dt.date(2028, 4, 17) in days_off  # Patriots' Day 2028
    assert is_business_day(dt.date(2028, 3, 17), days_off)  # Evacuation Day: Suffolk County only


def test_unknown_inspection_type_is_a_clear_error(profiles):
    with pytest.raises(KeyError, match="Longmeadow has no inspection type 'punch'"):
        profiles["longmeadow"].inspection_type("punch")


def test_stabilization_numbers_are_the_cgp_with_longmeadow_stricter(profiles):
    # CGP 2022 Part 2.2.14.a: initiate by the end of the next work day; complete within 14 days (7 sensitive).
    for town in ("longmeadow", "southborough"):
        rule = profiles[town].stabilization
        assert (rule.initiate_work_days, rule.complete_days, rule.complete_days_sensitive) == (1, 14, 7)
    assert profiles["longmeadow"].stabilization.days == 7  # §380-11 C(3)(a)
    # Southborough's text is silent: no town limit, and no Longmeadow section in its citation.
    assert profiles["southborough"].stabilization.days is None
    assert "380" not in profiles["southborough"].stabilization.citation


def test_southborough_citations_shortened_for_pages_and_mail_keep_their_parentheses_closed(profiles):
    """Pages, mail and obligations print a rule's short citation. Southborough's explain their section inside
    parentheses ("§7.5 (Entry: the Commission or its agent may enter...)"), and the short form was cut there:
    "§7.5 (Entry, town policy" in the certificate's email and on the permit page."""
    town = profiles["southborough"]
    assert town.cure_period.cited(short_citation(town.cure_period.citation)) == (
        "Town text silent on a cure period (§6.3), town policy")
    assert short_citation(town.inspection_type("periodic").citation) == "§5.0 (Environmental Site Monitor)"
    assert short_citation(town.om_certification.citation) == "Town text silent on an interval (§7.6 d)(6)"
    for profile in profiles.values():
        for kind in profile.inspection_types:
            short = short_citation(kind.citation)
            assert short.count("(") <= short.count(")"), (profile.key, kind.key, short)


def test_a_type_said_to_be_made_by_the_authoritys_agent_can_be_signed_by_one(profiles):
    """Southborough's erosion-control inspection said it was also made "at random by the Commission or its agents",
    but only the applicant's inspector may sign one: an agent doing what the page said met a 403. Whatever a type
    says is made by the authority's agent, an agent may sign."""
    from inspect_app.accounts.policy import ACTIONS
    from inspect_app.inspection_types import spec
    for profile in profiles.values():
        for kind in profile.inspection_types:
            if re.search(r"by the (Commission|DPW Director)[^.;]* agents?\b", kind.when):
                assert "agent" in ACTIONS[spec(kind.key).action], (profile.key, kind.key, kind.when)
