"""The inspection's weather, §380-16 C(4)(f)[1](e),(f): meteostat's own code against a fake server."""
from __future__ import annotations

import datetime as dt
import time

import pytest

from inspect_app.weather import source
from weather_fake import Hour, hours, recent_hour

UTC = dt.UTC


def test_a_normal_hour_gives_conditions_and_the_24_hours_ending_at_the_inspection(
        fake_meteostat, site, distance_m):
    inspected = dt.datetime(2024, 5, 14, 12, 40, tzinfo=UTC)
    first = dt.datetime(2024, 5, 13, 13, tzinfo=UTC)  # 12:00 − 23 h
    fake_meteostat.publish_hourly("NRM1", hours(first, 23, temp=15.0, prcp=0.3, wspd=11.0, wdir=180,
                                                coco=7))
    fake_meteostat.publish_hourly("NRM1", [
        Hour(dt.datetime(2024, 5, 14, 12, tzinfo=UTC), temp=17.5, prcp=0.7, wspd=18.0, wdir=225, coco=8),
        # Outside the window: the hour before it, and the hour after the inspection began.
        Hour(dt.datetime(2024, 5, 13, 12, tzinfo=UTC), temp=9.0, prcp=25.0),
        Hour(dt.datetime(2024, 5, 14, 13, tzinfo=UTC), temp=30.0, prcp=40.0, coco=9),
    ])

    result = source.lookup(*site("normal"), inspected)

    assert result.status == "complete"
    assert result.final  # May 2024 is long past meteostat's publication lag
    assert result.station == source.Station("NRM1", "Normal Field", pytest.approx(distance_m("NRM1"), abs=1))
    assert (result.temperature_c, result.condition_code, result.conditions) == (17.5, 8, "Rain")
    assert (result.wind_kmh, result.wind_direction_deg, result.wind_direction) == (18.0, 225, "SW")
    assert result.window_start_utc == first
    assert result.window_end_utc == dt.datetime(2024, 5, 14, 12, tzinfo=UTC)
    assert result.precip_hours == 24
    assert result.precip_24h_mm == 7.6  # 23 × 0.3 + 0.7, added in tenths so it is exactly 7.6
    assert result.sources == ("temperature=isd_lite; conditions=isd_lite; wind=isd_lite; "
                              "precipitation=isd_lite")
    assert result.model_filled == ()
    assert result.attribution == "Meteostat (CC BY 4.0)"
    assert result.fetched_at is not None and result.fetched_at.tzinfo is not None
    assert [r.hour for r in result.rows] == [first + dt.timedelta(hours=i) for i in range(24)]
    last = result.rows[-1]
    assert (last.station_id, last.temperature_c, last.precip_mm, last.condition_code) == (
        "NRM1", 17.5, 0.7, 8)
    assert last.source_of("prcp") == "isd_lite"


def test_an_excluded_station_is_passed_over_for_the_next_nearest(fake_meteostat, site, distance_m):
    inspected = dt.datetime(2024, 7, 2, 15, tzinfo=UTC)
    window = hours(inspected - dt.timedelta(hours=23), 24, temp=22.0, prcp=0.0)
    fake_meteostat.publish_hourly("NRM1", window)
    fake_meteostat.publish_hourly("NRM2", hours(inspected - dt.timedelta(hours=23), 24, temp=19.0,
                                                prcp=0.1))

    result = source.lookup(*site("normal"), inspected, exclude_stations={"NRM1"})

    assert result.station is not None and result.station.id == "NRM2"
    assert result.station.distance_m == pytest.approx(distance_m("NRM2"), abs=1)
    assert (result.temperature_c, result.precip_24h_mm, result.status) == (19.0, 2.4, "complete")


def test_missing_precipitation_hours_make_the_total_incomplete_not_zero(fake_meteostat, site):
    inspected = dt.datetime(2024, 8, 20, 18, 5, tzinfo=UTC)
    first = dt.datetime(2024, 8, 19, 19, tzinfo=UTC)
    # 24 hours of temperature, but precipitation in only 18 of them (6 hours lost).
    fake_meteostat.publish_hourly("INC1", hours(first, 24, temp=25.0, coco=3))
    fake_meteostat.publish_hourly("INC1", hours(first + dt.timedelta(hours=6), 18, temp=25.0, coco=3,
                                                prcp=0.5))

    result = source.lookup(*site("incomplete"), inspected)

    assert result.status == "incomplete"
    assert result.precip_hours == 18
    assert result.precip_24h_mm == 9.0  # what the 18 hours hold, reported as such, never as 0
    assert "18 of the 24 hours" in result.reason
    assert result.temperature_c == 25.0 and result.conditions == "Cloudy"
    assert len(result.rows) == 24
    assert sum(1 for r in result.rows if r.precip_mm is None) == 6


def test_a_station_reporting_no_precipitation_at_all_gives_no_total(fake_meteostat, site):
    inspected = dt.datetime(2024, 9, 3, 14, tzinfo=UTC)
    fake_meteostat.publish_hourly("MTR1", hours(inspected - dt.timedelta(hours=23), 24, temp=20.0,
                                                wspd=9.0, wdir=90, coco=2, source="metar"))

    result = source.lookup(*site("metar_only"), inspected)

    assert result.status == "incomplete"
    assert (result.precip_24h_mm, result.precip_hours) == (None, 0)
    assert (result.temperature_c, result.wind_direction) == (20.0, "E")
    assert result.sources == "temperature=metar; conditions=metar; wind=metar"


def test_model_filled_hours_are_marked_and_keep_a_recent_result_open(fake_meteostat, site):
    inspected = recent_hour(3)
    first = inspected - dt.timedelta(hours=23)
    fake_meteostat.publish_hourly("MDL1", hours(first, 21, temp=10.0, prcp=0.2, coco=7))
    # The newest hours are filled by a forecast model until observations replace them.
    fake_meteostat.publish_hourly("MDL1", hours(first + dt.timedelta(hours=21), 3, temp=11.0, prcp=1.0,
                                                coco=8, source="metno_forecast"))

    result = source.lookup(*site("model"), inspected)

    assert result.status == "complete"
    assert result.precip_hours == 24 and result.precip_model_hours == 3
    assert result.precip_24h_mm == 7.2
    assert set(result.model_filled) == {"temperature", "conditions", "precipitation"}
    assert "temperature=metno_forecast (model)" in result.sources
    assert "precipitation=isd_lite metno_forecast (model)" in result.sources
    assert result.attribution == "Meteostat (CC BY 4.0), MET Norway (NLOD 2.0)"
    assert not result.final  # a later lookup should pick up the observations

    # Observations arrive and replace the model's hours: now it is final.
    fake_meteostat.publish_hourly("MDL1", hours(first + dt.timedelta(hours=21), 3, temp=11.5, prcp=0.8,
                                                coco=8))
    again = source.lookup(*site("model"), inspected)
    assert (again.status, again.final, again.model_filled) == ("complete", True, ())
    assert again.precip_24h_mm == 6.6


def test_when_the_nearest_stations_have_no_data_the_next_one_is_used(fake_meteostat, site, distance_m):
    inspected = dt.datetime(2024, 3, 5, 9, 30, tzinfo=UTC)
    # FBK1 never published anything (404); FBK2 has this year's file but not these hours.
    fake_meteostat.publish_hourly("FBK2", hours(dt.datetime(2024, 1, 10, tzinfo=UTC), 48, temp=1.0,
                                                prcp=0.0))
    fake_meteostat.publish_hourly("FBK3", hours(inspected.replace(minute=0) - dt.timedelta(hours=23), 24,
                                                temp=4.0, prcp=0.4))
    # FBK4 has the hours too but is beyond the 50 km radius.
    fake_meteostat.publish_hourly("FBK4", hours(inspected.replace(minute=0) - dt.timedelta(hours=23), 24,
                                                temp=-3.0, prcp=0.0))

    result = source.lookup(*site("fallback"), inspected)

    assert result.station is not None and result.station.id == "FBK3"
    assert result.station.distance_m == pytest.approx(distance_m("FBK3"), abs=1)
    assert (result.status, result.temperature_c, result.precip_24h_mm) == ("complete", 4.0, 9.6)
    asked = fake_meteostat.requests
    assert "/hourly/2024/FBK1.csv.gz" in asked and "/hourly/2024/FBK2.csv.gz" in asked
    assert "/hourly/2024/FBK4.csv.gz" not in asked


def test_no_station_with_data_in_a_settled_window_is_incomplete_without_values(fake_meteostat, site):
    result = source.lookup(*site("nowhere"), dt.datetime(2023, 6, 1, 12, tzinfo=UTC))

    assert (result.status, result.final, result.station, result.precip_24h_mm) == (
        "incomplete", True, None, None)
    assert "no station within 50 km" in result.reason


def test_hours_not_yet_published_are_pending_and_a_later_lookup_completes(fake_meteostat, site):
    inspected = recent_hour(2) + dt.timedelta(minutes=25)
    first = inspected.replace(minute=0) - dt.timedelta(hours=23)

    before = source.lookup(*site("pending"), inspected)

    assert (before.status, before.final, before.precip_24h_mm) == ("pending", False, None)
    assert "yet" in before.reason

    fake_meteostat.publish_hourly("PND1", hours(first, 24, temp=12.0, prcp=0.5, coco=7))
    after = source.lookup(*site("pending"), inspected)

    assert (after.status, after.precip_24h_mm, after.precip_hours) == ("complete", 12.0, 24)
    assert after.station is not None and after.station.id == "PND1"


def test_a_station_that_has_published_only_older_hours_is_pending(fake_meteostat, site):
    inspected = recent_hour(1)
    first = inspected - dt.timedelta(hours=23)
    fake_meteostat.publish_hourly("PRT1", hours(first, 19, temp=8.0, prcp=0.1))

    before = source.lookup(*site("partial"), inspected)

    assert before.status == "pending"
    assert before.reason == "Half Published has not yet published the last 5 hour(s) before the inspection"
    # What there is so far, for the form to show as provisional: 1.9 mm over 19 hours, 5 not published.
    assert (before.precip_hours, before.precip_24h_mm, before.precip_hours_unpublished) == (19, 1.9, 5)
    assert before.provisional and before.observed_at == first + dt.timedelta(hours=18)

    fake_meteostat.publish_hourly("PRT1", hours(first + dt.timedelta(hours=19), 5, temp=8.0, prcp=0.1))
    assert source.lookup(*site("partial"), inspected).status == "complete"


def test_a_hung_server_gives_pending_within_the_deadline(fake_meteostat, site, quiet_workers):
    inspected = dt.datetime(2024, 10, 8, 16, tzinfo=UTC)
    fake_meteostat.publish_hourly("HNG1", hours(inspected - dt.timedelta(hours=23), 24, temp=9.0))
    fake_meteostat.hang("/hourly/2024/HNG1.csv.gz")
    source.lookup(*site("normal"), dt.datetime(2024, 5, 14, 12, tzinfo=UTC))  # station list on disk

    started = time.monotonic()
    result = source.lookup(*site("hang"), inspected, deadline_s=0.3)
    elapsed = time.monotonic() - started

    assert result.status == "pending"
    assert result.reason == "the weather service did not answer within 0.3 s"
    assert elapsed < 0.3 + 0.25


def test_hung_lookups_do_not_pile_up_threads(fake_meteostat, site, live_workers, quiet_workers):
    inspected = dt.datetime(2024, 10, 9, 16, tzinfo=UTC)
    fake_meteostat.publish_hourly("BSY1", hours(inspected - dt.timedelta(hours=23), 24, temp=9.0))
    fake_meteostat.hang("/hourly/2024/BSY1.csv.gz")

    reasons = []
    for _ in range(source.MAX_IN_FLIGHT + 3):
        started = time.monotonic()
        reasons.append(source.lookup(*site("busy"), inspected, deadline_s=0.1).reason)
        assert time.monotonic() - started < 0.1 + 0.25
        assert len(live_workers()) <= source.MAX_IN_FLIGHT

    assert reasons[-1] == "earlier weather requests are still waiting on the service"
    # Each stuck worker ends by itself once its socket times out (0.5 s here).
    until = time.monotonic() + 3
    while live_workers() and time.monotonic() < until:
        time.sleep(0.05)
    assert live_workers() == []


def test_a_server_error_at_a_nearer_station_is_pending_not_a_fall_back(fake_meteostat, site):
    inspected = dt.datetime(2024, 4, 2, 13, tzinfo=UTC)
    window = hours(inspected - dt.timedelta(hours=23), 24, temp=6.0, prcp=0.2)
    fake_meteostat.publish_hourly("ERR1", window)
    fake_meteostat.publish_hourly("ERR2", window)
    fake_meteostat.fail("/hourly/2024/ERR1.csv.gz", 503)

    broken = source.lookup(*site("server_error"), inspected)

    assert (broken.status, broken.station) == ("pending", None)
    assert broken.reason == "the weather service failed to send a station's data"

    fake_meteostat.serve("/hourly/2024/ERR1.csv.gz")
    mended = source.lookup(*site("server_error"), inspected)
    assert (mended.status, mended.station.id) == ("complete", "ERR1")  # type: ignore[union-attr]


def test_a_window_across_midnight_and_new_year_reads_both_years(fake_meteostat, site):
    inspected = dt.datetime(2025, 1, 1, 2, 30, tzinfo=UTC)  # 21:30 on 31 December in Massachusetts
    first = dt.datetime(2024, 12, 31, 3, tzinfo=UTC)
    fake_meteostat.publish_hourly("NYR1", hours(first, 24, temp=-2.0, prcp=0.2, coco=14))
    fake_meteostat.publish_hourly("NYR1", [
        Hour(first - dt.timedelta(hours=1), prcp=9.9),  # 02:00 on the 31st: 25 hours back
        Hour(dt.datetime(2025, 1, 1, 3, tzinfo=UTC), prcp=9.9),  # the hour after the inspection
    ])

    result = source.lookup(*site("new_year"), inspected)

    assert result.status == "complete"
    assert (result.precip_hours, result.precip_24h_mm) == (24, 4.8)
    assert (result.rows[0].hour, result.rows[-1].hour) == (first, dt.datetime(2025, 1, 1, 2, tzinfo=UTC))
    assert {"/hourly/2024/NYR1.csv.gz", "/hourly/2025/NYR1.csv.gz"} <= set(fake_meteostat.requests)
    assert result.conditions == "Light Snowfall"


def test_a_local_inspection_time_is_read_as_that_instant(fake_meteostat, site):
    eastern = dt.timezone(dt.timedelta(hours=-5))
    inspected_local = dt.datetime(2024, 12, 31, 21, 30, tzinfo=eastern)

    result = source.lookup(*site("new_year"), inspected_local)

    assert result.at_utc == dt.datetime(2025, 1, 1, 2, 30, tzinfo=UTC)
    assert result.window_end_utc == dt.datetime(2025, 1, 1, 2, tzinfo=UTC)


def test_offline_gives_pending_quickly(site, offline):
    started = time.monotonic()
    result = source.lookup(*site("normal"), dt.datetime(2024, 5, 14, 12, tzinfo=UTC))
    elapsed = time.monotonic() - started

    assert result.status == "pending"
    assert result.reason == "the weather service could not be reached"
    assert elapsed < 1.0


@pytest.mark.parametrize("call, message", [
    (lambda: source.lookup(30.0, -72.0, dt.datetime(2024, 5, 14, 12)), "timezone-aware"),
    (lambda: source.lookup(91.0, -72.0, dt.datetime(2024, 5, 14, 12, tzinfo=UTC)), "latitude"),
    (lambda: source.lookup(30.0, float("nan"), dt.datetime(2024, 5, 14, 12, tzinfo=UTC)), "longitude"),
    (lambda: source.lookup(30.0, -72.0, dt.datetime(2024, 5, 14, 12, tzinfo=UTC), deadline_s=0),
     "deadline_s"),
])
def test_bad_input_is_refused_with_a_clear_message_and_asks_nothing(fake_meteostat, call, message):
    asked = len(fake_meteostat.requests)

    with pytest.raises(ValueError, match=message):
        call()

    assert len(fake_meteostat.requests) == asked
