"""Units: the record stores SI, forms, pages, PDFs and mail show inches, °F and mph (spec "Weather")."""
from __future__ import annotations

import pytest

from inspect_app import units


@pytest.mark.parametrize("mm, inches", [(0.0, 0.0), (25.4, 1.0), (6.35, 0.25), (None, None)])
def test_millimetres_to_inches(mm, inches):
    assert units.mm_to_in(mm) == (pytest.approx(inches) if inches is not None else None)


@pytest.mark.parametrize("inches, mm", [(1.0, 25.4), (0.5, 12.7), (0.013, 0.33), (None, None)])
def test_inches_typed_in_a_form_are_stored_in_millimetres(inches, mm):
    assert units.in_to_mm(inches) == mm


@pytest.mark.parametrize("celsius, fahrenheit", [(0.0, 32.0), (100.0, 212.0), (-40.0, -40.0),
                                                 (17.5, 63.5), (None, None)])
def test_celsius_to_fahrenheit(celsius, fahrenheit):
    assert units.c_to_f(celsius) == (pytest.approx(fahrenheit) if fahrenheit is not None else None)


@pytest.mark.parametrize("kmh, mph", [(0.0, 0.0), (1.609344, 1.0), (100.0, 62.137119), (None, None)])
def test_kilometres_per_hour_to_miles_per_hour(kmh, mph):
    assert units.kmh_to_mph(kmh) == (pytest.approx(mph) if mph is not None else None)


def test_the_storm_threshold_is_exactly_a_quarter_inch():
    assert units.inches(6.35) == "0.25 in"
    assert units.inches(6.3) == "0.25 in"  # why the record keeps mm: display rounds


@pytest.mark.parametrize("show, value, shown", [
    (units.inches, 12.7, "0.50 in"), (units.inches, None, "—"),
    (units.inches_figure, 12.7, "0.50"), (units.inches_figure, None, ""),
    (units.inches_and_mm, 6.35, "0.25 in (6.3 mm)"),
    (units.fahrenheit, 17.5, "64 °F"), (units.fahrenheit, None, "—"),
    (units.mph, 18.0, "11 mph"), (units.miles, 5000.0, "3.1 mi"), (units.kilometres, 5000.0, "5.0 km"),
    (units.compass, 225.0, "SW"), (units.compass, None, ""),
])
def test_how_a_measure_is_written(show, value, shown):
    assert show(value) == shown


@pytest.mark.parametrize("degrees, eight, sixteen", [(0, "N", "N"), (23, "N", "NNE"), (24, "NE", "NNE"),
                                                     (210, "SW", "SSW"), (359, "N", "N")])
def test_compass_points(degrees, eight, sixteen):
    assert units.compass_point(degrees) == eight
    assert units.compass_point(degrees, points=16) == sixteen


def test_pages_use_the_same_filters(app):
    with app.app_context():
        rendered = app.jinja_env.from_string(
            "{{ 6.35|inches }} · {{ 12.7|inches_figure }} · {{ 17.5|fahrenheit }} · {{ 18|mph }}").render()
    assert rendered == "0.25 in · 0.50 · 64 °F · 11 mph"
