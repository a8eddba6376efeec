"""Rain per local day, for the storm-event sweep (CGP 2022 Part 4: 0.25 in in 24 hours) and the chart."""
from __future__ import annotations

import datetime as dt

import pytest

from inspect_app import units
from inspect_app.weather import source
from weather_fake import Hour, hours

UTC = dt.UTC
STORM_MM = 25.4 * 0.25  # spec "Weather": a storm of 0.25 in (6.35 mm) or more


def test_daylight_saving_days_have_23_and_25_hours(fake_meteostat, site):
    fake_meteostat.publish_hourly("RAIN", hours(dt.datetime(2024, 3, 8, tzinfo=UTC), 5 * 24, prcp=0.1))
    fake_meteostat.publish_hourly("RAIN", hours(dt.datetime(2024, 11, 1, tzinfo=UTC), 5 * 24, prcp=0.1))

    spring = source.daily_precipitation(*site("rain"), dt.date(2024, 3, 9), dt.date(2024, 3, 11))
    autumn = source.daily_precipitation(*site("rain"), dt.date(2024, 11, 2), dt.date(2024, 11, 4))

    assert [(d.day.day, d.hours_in_day, d.hours_with_data, d.precip_mm) for d in spring.days] == [
        (9, 24, 24, 2.4), (10, 23, 23, 2.3), (11, 24, 24, 2.4)]
    assert [(d.day.day, d.hours_in_day, d.hours_with_data, d.precip_mm) for d in autumn.days] == [
        (2, 24, 24, 2.4), (3, 25, 25, 2.5), (4, 24, 24, 2.4)]
    assert spring.status == autumn.status == "complete"
    assert spring.station is not None and spring.station.id == "RAIN"
    assert spring.attribution == "Meteostat (CC BY 4.0)"


def test_a_6_4_mm_day_is_a_storm_and_a_6_1_mm_day_is_not(fake_meteostat, site):
    fake_meteostat.publish_hourly("RAIN", hours(dt.datetime(2024, 6, 9, tzinfo=UTC), 4 * 24, prcp=0.0))
    # 10 June (EDT, UTC−4): 16 hours of 0.4 mm, the last labelled 04:00 UTC on the 11th, which is
    # the hour ending at local midnight, so it still belongs to the 10th.
    fake_meteostat.publish_hourly("RAIN", hours(dt.datetime(2024, 6, 10, 13, tzinfo=UTC), 16, prcp=0.4))
    # 11 June: 20 hours of 0.3 mm and 0.1 mm in the hour ending at midnight local.
    fake_meteostat.publish_hourly("RAIN", hours(dt.datetime(2024, 6, 11, 5, tzinfo=UTC), 20, prcp=0.3))
    fake_meteostat.publish_hourly("RAIN", [Hour(dt.datetime(2024, 6, 12, 4, tzinfo=UTC), prcp=0.1)])

    series = source.daily_precipitation(*site("rain"), dt.date(2024, 6, 10), dt.date(2024, 6, 11))

    stormy, wet = series.days
    assert (stormy.precip_mm, stormy.hours_with_data) == (6.4, 24)  # exactly, not 6.400000000000001
    assert (wet.precip_mm, wet.hours_with_data) == (6.1, 24)
    assert stormy.precip_mm >= STORM_MM and units.mm_to_in(stormy.precip_mm) >= 0.25
    assert wet.precip_mm < STORM_MM and units.mm_to_in(wet.precip_mm) < 0.25


def test_a_reported_6_35_mm_reaches_the_storm_threshold(fake_meteostat, site):
    # meteostat keeps precipitation to 0.1 mm: the 6.35 mm (0.25 in) a gauge reports comes back 6.4.
    fake_meteostat.publish_hourly("RAIN", hours(dt.datetime(2024, 7, 1, tzinfo=UTC), 3 * 24, prcp=0.0))
    fake_meteostat.publish_hourly("RAIN", [Hour(dt.datetime(2024, 7, 2, 18, tzinfo=UTC), prcp=6.35)])

    (day,) = source.daily_precipitation(*site("rain"), dt.date(2024, 7, 2), dt.date(2024, 7, 2)).days

    assert day.precip_mm == 6.4
    assert day.precip_mm >= STORM_MM


def test_days_missing_hours_are_flagged_not_counted_as_dry(fake_meteostat, site):
    fake_meteostat.publish_hourly("RAIN", hours(dt.datetime(2024, 8, 1, 4, tzinfo=UTC), 24, prcp=0.5))
    fake_meteostat.publish_hourly("RAIN", hours(dt.datetime(2024, 8, 2, 4, tzinfo=UTC), 6, prcp=1.0))

    series = source.daily_precipitation(*site("rain"), dt.date(2024, 7, 31), dt.date(2024, 8, 3))

    assert [(d.precip_mm, d.hours_with_data, d.complete) for d in series.days] == [
        (0.5, 1, False),  # only the hour ending at midnight, 04:00 UTC on 1 August
        (12.5, 24, True),  # 23 × 0.5 and the hour ending at midnight, 1.0
        (5.0, 5, False),
        (None, 0, False),
    ]
    assert series.status == "incomplete"
    assert series.reason == "Rain Gauge Field is missing precipitation hours on 3 day(s)"


def test_no_station_near_gives_an_empty_incomplete_series(fake_meteostat, site):
    series = source.daily_precipitation(*site("nowhere"), dt.date(2024, 1, 1), dt.date(2024, 1, 2))

    assert (series.status, series.station) == ("incomplete", None)
    assert [(d.precip_mm, d.hours_with_data) for d in series.days] == [(None, 0), (None, 0)]


def test_a_hung_server_gives_a_pending_series_within_the_deadline(fake_meteostat, site, quiet_workers):
    fake_meteostat.hang("/hourly/2023/HNG1.csv.gz")

    series = source.daily_precipitation(*site("hang"), dt.date(2023, 2, 1), dt.date(2023, 2, 2),
                                        deadline_s=0.3)

    assert series.status == "pending"
    assert [d.precip_mm for d in series.days] == [None, None]


@pytest.mark.parametrize("start, end, message", [
    (dt.date(2024, 6, 2), dt.date(2024, 6, 1), "end_day must not be before start_day"),
    (dt.date(2020, 1, 1), dt.date(2024, 1, 1), "at most 400 days"),
])
def test_bad_ranges_are_refused_with_a_clear_message(fake_meteostat, site, start, end, message):
    asked = len(fake_meteostat.requests)

    with pytest.raises(ValueError, match=message):
        source.daily_precipitation(*site("rain"), start, end)

    assert len(fake_meteostat.requests) == asked
