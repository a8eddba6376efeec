"""Display units: the record stores SI, the page shows inches, °F and mph (spec "Weather")."""
from __future__ import annotations

import pytest

from inspect_app.weather import source


@pytest.mark.parametrize("mm, inches", [(0.0, 0.0), (25.4, 1.0), (6.35, 0.25), (None, None)])
def test_millimetres_to_inches(mm, inches):
    assert source.mm_to_in(mm) == (pytest.approx(inches) if inches is not None else None)


@pytest.mark.parametrize("celsius, fahrenheit", [(0.0, 32.0), (100.0, 212.0), (-40.0, -40.0),
                                                 (17.5, 63.5), (None, None)])
def test_celsius_to_fahrenheit(celsius, fahrenheit):
    assert source.c_to_f(celsius) == (pytest.approx(fahrenheit) if fahrenheit is not None else None)


@pytest.mark.parametrize("kmh, mph", [(0.0, 0.0), (1.609344, 1.0), (100.0, 62.137119), (None, None)])
def test_kilometres_per_hour_to_miles_per_hour(kmh, mph):
    assert source.kmh_to_mph(kmh) == (pytest.approx(mph) if mph is not None else None)


def test_the_storm_threshold_is_exactly_a_quarter_inch():
    assert f"{source.mm_to_in(6.35):.2f} in" == "0.25 in"
    assert f"{source.mm_to_in(6.3):.2f} in" == "0.25 in"  # why the record keeps mm: display rounds
