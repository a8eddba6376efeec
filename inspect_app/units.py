"""Units: the record keeps SI (mm, °C, km/h, m), people read inches, °F and mph (SPEC *Weather*).

The one home of every conversion and of how a measure is written, for forms, pages (as Jinja filters,
see `FILTERS`), PDFs, mail and the rules engine alike. Pure Python: no Flask or database import.
"""
from __future__ import annotations

MM_PER_INCH = 25.4
KM_PER_MILE = 1.609344


# -- conversions (None stays None) ------------------------------------------------------------------------

def mm_to_in(mm: float | None) -> float | None:
    """Millimetres to inches."""
    return None if mm is None else mm / MM_PER_INCH


def in_to_mm(inches: float | None) -> float | None:
    """Inches, as typed in a form, to the millimetres stored (to 0.01 mm)."""
    return None if inches is None else round(inches * MM_PER_INCH, 2)


def c_to_f(celsius: float | None) -> float | None:
    """Degrees Celsius to degrees Fahrenheit."""
    return None if celsius is None else celsius * 9 / 5 + 32


def kmh_to_mph(kmh: float | None) -> float | None:
    """Kilometres per hour to miles per hour."""
    return None if kmh is None else kmh / KM_PER_MILE


def m_to_mi(metres: float | None) -> float | None:
    """Metres to miles."""
    return None if metres is None else metres / 1000 / KM_PER_MILE


_COMPASS_8 = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")
_COMPASS_16 = ("N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW")


def compass_point(degrees: float, points: int = 8) -> str:
    """A wind direction in degrees as a compass point: 225 → "SW"; `points=16` for the finer rose ("SSW")."""
    if points == 16:
        return _COMPASS_16[round(degrees / 22.5) % 16]
    # As meteostat's to_direction: each point covers 45° around it, at whole degrees: N is 337°–23°, NE 24°–68°.
    whole = round(degrees) % 360
    return "N" if whole >= 337 or whole <= 23 else _COMPASS_8[(whole - 24) // 45 + 1]


# -- how a measure is written ("—" where there is none) ------------------------------------------------------

def _written(value: float | None, template: str, missing: str = "—") -> str:
    return missing if value is None else template.format(value)


def inches(mm: float | None) -> str:
    """Millimetres shown as inches to two decimals: 6.35 → "0.25 in"."""
    return _written(mm_to_in(mm), "{:.2f} in")


def inches_figure(mm: float | None) -> str:
    """Millimetres as the figure a form's inches field holds: 12.7 → "0.50"; nothing → ""."""
    return _written(mm_to_in(mm), "{:.2f}", missing="")


def inches_and_mm(mm: float | None) -> str:
    """Inches with the stored millimetres beside them, for the record: "0.25 in (6.4 mm)"."""
    return "—" if mm is None else f"{inches(mm)} ({mm:.1f} mm)"


def fahrenheit(celsius: float | None) -> str:
    """Degrees Celsius shown as whole degrees Fahrenheit: 17.5 → "64 °F"."""
    return _written(_whole(c_to_f(celsius)), "{:d} °F")


def mph(kmh: float | None) -> str:
    """Kilometres per hour shown as whole miles per hour: 18 → "11 mph"."""
    return _written(_whole(kmh_to_mph(kmh)), "{:d} mph")


def miles(metres: float | None) -> str:
    """Metres shown as miles to one decimal: 5000 → "3.1 mi"."""
    return _written(m_to_mi(metres), "{:.1f} mi")


def kilometres(metres: float | None) -> str:
    """Metres shown as kilometres to one decimal: 5000 → "5.0 km"."""
    return _written(None if metres is None else metres / 1000, "{:.1f} km")


def compass(degrees: float | None) -> str:
    """A wind direction as one of 8 compass points, or "" where there is none."""
    return "" if degrees is None else compass_point(degrees)


def _whole(value: float | None) -> int | None:
    return None if value is None else round(value)


# The Jinja filters (registered by `templating`): `{{ inspection.precip_24h_mm|inches }}`.
FILTERS = {"inches": inches, "inches_figure": inches_figure, "fahrenheit": fahrenheit, "mph": mph,
           "miles": miles, "compass": compass}
