"""Fixtures for the record-integrity tests: the O&M phase's completed permits, and weather kept offline."""
from __future__ import annotations

import pytest

from tests.certifications.conftest import completed_permit  # noqa: F401  (a fixture, shared)


@pytest.fixture(autouse=True)
def _weather_kept_offline(weather_offline):
    """Every test here runs with the weather service unreachable (the `weather_offline` fixture)."""
