"""Weather observations kept by station and hour, and storm events found at permits."""
from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import JSON, Date, ForeignKey, String, UniqueConstraint, false, text
from sqlalchemy.orm import Mapped, mapped_column

from inspect_app.extensions import db
from inspect_app.types import UTCDateTime, new_id, utcnow
from inspect_app.weather.source import StationList


class WeatherObservation(db.Model):
    """One station-hour as fetched, so a report never changes because meteostat's cache did."""

    __tablename__ = "weather_observations"

    station_id: Mapped[str] = mapped_column(String(20), primary_key=True)
    hour: Mapped[dt.datetime] = mapped_column(UTCDateTime, primary_key=True)
    temperature_c: Mapped[float | None]
    precip_mm: Mapped[float | None]
    wind_kmh: Mapped[float | None]
    wind_direction_deg: Mapped[float | None]
    condition_code: Mapped[int | None]
    # The snow on the ground (meteostat's hourly `snwd`), read for snowmelt (CGP 2022 Parts 4.2, 4.3).
    snow_depth_cm: Mapped[float | None]
    sources: Mapped[str | None] = mapped_column(String(200))
    fetched_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)


class StormEvent(db.Model):
    """A storm event at a permit: 0.25 in (the profile's threshold) or more within 24 hours (CGP 2022 Part 4.2).

    Found by `flask compliance sweep` from the stored hourly data of the permit's precipitation station
    (`rules/storms.py`): the rain began at `started_at`, its rolling 24-hour total reached the threshold
    at `reached_at` (the 24-hour clock starts there) and it ended at `ended_at`; `multi_day` when it went on
    for several 24-hour periods each of the threshold or more. `hours_missing`: hours without data in the
    24 hours up to `reached_at` (the moment may have been earlier). `ongoing`: the 24 hours after its last
    period are not all published yet. `day` is the local date of `reached_at`. Rows of the old record have
    only `day` and `depth_mm`: a calendar day's total.
    """

    __tablename__ = "storm_events"
    __table_args__ = (UniqueConstraint("permit_id", "reached_at", name="uq_storm_permit_reached"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), index=True)
    day: Mapped[dt.date] = mapped_column(Date)
    depth_mm: Mapped[float]
    station_id: Mapped[str | None] = mapped_column(String(20))
    detected_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    started_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    reached_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    ended_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)
    multi_day: Mapped[bool] = mapped_column(default=False, server_default=false())
    hours_missing: Mapped[int] = mapped_column(default=0, server_default=text("0"))
    ongoing: Mapped[bool] = mapped_column(default=False, server_default=false())


class PermitStation(db.Model):
    """The station last found to represent a permit's site (the nearest with data), with its distance.

    Lets a report use stored station-hours without first asking meteostat which station is nearest,
    and lets the rainfall chart skip a fetch it made less than an hour ago.
    """

    __tablename__ = "permit_stations"

    permit_id: Mapped[str] = mapped_column(ForeignKey("permits.id"), primary_key=True)
    station_id: Mapped[str] = mapped_column(String(20))
    station_name: Mapped[str] = mapped_column(String(120))
    distance_m: Mapped[float]
    found_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow)
    rainfall_fetched_at: Mapped[dt.datetime | None] = mapped_column(UTCDateTime)


class StationArea(db.Model):
    """Meteostat's station list around a point as asked at `asked_at` (`weather.source.StationList`).

    Every app server finds a site's nearest stations here while the list is fresh, instead of asking
    meteostat's station list (through a fetcher process) at each report and chart.
    """

    __tablename__ = "weather_station_areas"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    latitude: Mapped[float]
    longitude: Mapped[float]
    radius_m: Mapped[float]
    stations: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    asked_at: Mapped[dt.datetime] = mapped_column(UTCDateTime, default=utcnow, index=True)

    def as_list(self) -> StationList:
        """The list as `weather.source` reads it."""
        return StationList(self.latitude, self.longitude, self.radius_m, tuple(self.stations))
