"""Snowmelt from a station's hourly snow depth (CGP 2022 Parts 4.2, 4.3): the sweep reads meteostat's `snwd`
with the rain, finds a storm of 3.25 in (82.55 mm) or more of snow within 24 hours and the first hour its snow
melted, and records the discharge; the permit then owes an inspection within 24 hours of it."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.conditions.models import SnowmeltDischarge
from inspect_app.extensions import db
from inspect_app.schedule.models import PermitObligation
from inspect_app.weather import services
from inspect_app.weather.models import WeatherObservation
from weather_fake import hours

UTC = dt.UTC
H = dt.timedelta(hours=1)


def utc(*args: int) -> dt.datetime:
    return dt.datetime(*args, tzinfo=UTC)


def snow_hours() -> list:
    """Dry and cold from 8 January 2025; 10 cm of snow between 06:00 and 18:00 on the 11th; a thaw from 13:00 on
    the 14th (the depth falls as the air rises above freezing)."""
    published = []
    for k in range(24 * 9):
        at = utc(2025, 1, 8) + k * H
        depth = 0.0 if at <= utc(2025, 1, 11, 6) else min(10.0, (at - utc(2025, 1, 11, 6)) / H * 10 / 12)
        thawing = at >= utc(2025, 1, 14, 13)
        if thawing:
            depth = max(0.0, 10.0 - (at - utc(2025, 1, 14, 12)) / H)
        published += hours(at, 1, prcp=0.0, temp=4.0 if thawing else -5.0, snwd=round(depth, 1))
    return published


def test_the_sweep_finds_a_snowmelt_discharge_in_the_stations_snow_depth(app_meteostat, permit_at):
    """CGP 2022 Parts 4.2-4.3 (snowmelt), from the station: meteostat's own code reads the hourly snow depth."""
    app_meteostat.publish_hourly("STM1", snow_hours())
    permit = permit_at("storm", cgp_schedule="every_14_days_and_storm", issued_on=dt.date(2024, 12, 2),
                       construction_started_on=dt.date(2024, 12, 3))

    outcome = services.sweep_storms(8, now=utc(2025, 1, 15, 10))
    db.session.commit()

    stored = db.session.scalar(select(WeatherObservation.snow_depth_cm).where(
        WeatherObservation.station_id == "STM1", WeatherObservation.hour == utc(2025, 1, 11, 18)))
    assert stored == 10.0
    (melt,) = db.session.scalars(select(SnowmeltDischarge).where(SnowmeltDischarge.permit_id == permit.id)).all()
    assert (melt.discharge_at, melt.snow_mm, melt.station_id, melt.seen_on_site) == (utc(2025, 1, 14, 13), 100.0,
                                                                                       "STM1", False)
    assert [number for number, _ in outcome.snowmelts] == [permit.number]
    (owed,) = db.session.scalars(select(PermitObligation).where(PermitObligation.permit_id == permit.id,
                                                                PermitObligation.kind == "storm_inspection")).all()
    assert (owed.opens_at, owed.due_at) == (utc(2025, 1, 14, 13), utc(2025, 1, 15, 13))
    assert owed.citation == "CGP 2022 Parts 4.2, 4.3" and "shown by the weather station's snow depth" in owed.reason

    # Swept again, the same discharge is not recorded twice.
    again = services.sweep_storms(8, now=utc(2025, 1, 15, 11))
    db.session.commit()
    assert again.snowmelts == ()
    assert len(db.session.scalars(select(SnowmeltDischarge)).all()) == 1
