"""weather.providers holds meteostat's provider registry and condition names as plain tables, so pages never
load meteostat; these tests hold the tables to the installed meteostat, so an upgrade cannot make them drift."""
from __future__ import annotations

from meteostat.core.providers import provider_service
from meteostat.utils.conversions import to_condition

from inspect_app.weather import providers, source


def test_the_provider_table_is_meteostats_registry():
    registry = {p.id.value: (p.name, bool(p.grade and p.grade.name in ("FORECAST", "ANALYSIS")),
                             p.license.name if p.license else None, p.license.attribution if p.license else None)
                for p in provider_service.providers}
    ours = {p.id: (p.name, p.model, p.licence, p.attribution) for p in providers.PROVIDERS.values()}
    assert ours == registry


def test_the_condition_names_are_meteostats():
    assert [providers.condition_name(code) for code in range(0, 29)] == [to_condition(code) for code in range(0, 29)]
    assert providers.condition_name(None) is None


def test_a_report_names_each_provider_and_credits_those_that_ask():
    assert providers.provider_name("isd_lite") == "NOAA ISD Lite"
    assert providers.provider_name("someone_new") == "someone_new"  # a provider meteostat does not list yet
    assert source.attribution(["isd_lite", "metno_forecast dwd_mosmix"]) == (
        "Meteostat (CC BY 4.0), Deutscher Wetterdienst (CC BY 4.0), MET Norway (NLOD 2.0)")
