"""What meteostat says about its data, as plain tables: its providers and its weather-condition names.

Pages show a report's weather with its sources and their licences (spec "Weather"), and a result read back
from stored hours names its conditions; neither needs meteostat itself, which brings pandas and numpy
(about 160 MB) into any process that imports it (issue 18). The tables are meteostat's own, kept in
providers.toml beside this module; tests/weather/test_weather_providers.py compares them with the
installed meteostat, so an upgrade that changes them fails a test instead of drifting.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Provider:
    """One of meteostat's data providers: `model` is True for forecast or analysis (model) data."""

    id: str
    name: str
    model: bool
    licence: str | None = None
    attribution: str | None = None


_TABLES = tomllib.loads((Path(__file__).parent / "providers.toml").read_text(encoding="utf-8"))
PROVIDERS: dict[str, Provider] = {key: Provider(key, **fields) for key, fields in _TABLES["providers"].items()}
CONDITIONS: tuple[str, ...] = tuple(_TABLES["conditions"])  # meteostat's condition codes 1..27, in order


def provider_name(provider_id: str) -> str:
    """A data provider's name ("NOAA ISD Lite"), or the id if meteostat does not list it."""
    provider = PROVIDERS.get(provider_id)
    return provider.name if provider else provider_id


def is_model(provider_id: str) -> bool:
    """Whether a provider's data comes from a model (forecast or analysis) rather than observations."""
    provider = PROVIDERS.get(provider_id)
    return provider is not None and provider.model


def condition_name(code: int | None) -> str | None:
    """The words for a meteostat condition code ("Overcast" for 4); None when there is no such code."""
    if code is None or not 1 <= code <= len(CONDITIONS):
        return None
    return CONDITIONS[code - 1]
