"""Points on the earth (WGS 84 decimal degrees): the ranges a latitude and a longitude may take, and the
columns that give a disturbed area or a stormwater structure its place on the site map."""
from __future__ import annotations

from typing import ClassVar

from sqlalchemy import CheckConstraint
from sqlalchemy.orm import Mapped

LATITUDE_RANGE = (-90.0, 90.0)
LONGITUDE_RANGE = (-180.0, 180.0)
# Massachusetts with a margin of about a kilometre (Nantucket and Nomans Land to the Berkshires): a site in
# one of its towns lies inside; a swapped latitude and longitude, or a longitude missing its minus, does not.
MASSACHUSETTS_LATITUDES = (41.18, 42.90)
MASSACHUSETTS_LONGITUDES = (-73.52, -69.85)


def point_checks() -> tuple[CheckConstraint, ...]:
    """The database's own check of a point: in range, and latitude and longitude given together."""
    return (
        CheckConstraint(f"latitude BETWEEN {LATITUDE_RANGE[0]:g} AND {LATITUDE_RANGE[1]:g}", name="latitude_range"),
        CheckConstraint(f"longitude BETWEEN {LONGITUDE_RANGE[0]:g} AND {LONGITUDE_RANGE[1]:g}",
                        name="longitude_range"),
        CheckConstraint("(latitude IS NULL) = (longitude IS NULL)", name="point_whole"),
    )


class SitePoint:
    """Where on the site a record is: tapped on the site map or taken from the device's GPS; none until given.

    Each record that has one says what the site map calls it (`point_name`) and the word its audit entry
    starts with (`point_kind`: "area", "structure", "easement"), so placing a point needs no list of them.
    """

    point_kind: ClassVar[str]
    latitude: Mapped[float | None]
    longitude: Mapped[float | None]

    @property
    def point_name(self) -> str:
        """What the site map calls the record: its name."""
        return self.name  # type: ignore[attr-defined]

    @property
    def has_point(self) -> bool:
        return self.latitude is not None and self.longitude is not None
