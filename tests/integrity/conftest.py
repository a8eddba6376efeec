"""Fixtures for the record-integrity tests: the O&M phase's completed permits, and weather kept offline."""
from __future__ import annotations

import socket

import pytest

from inspect_app.weather import source
from tests.certifications.conftest import completed_permit  # noqa: F401  (a fixture, shared)


@pytest.fixture(autouse=True)
def weather_offline(app, tmp_path):
    """The weather service is a closed port on 127.0.0.1: lookups fail at once and weather stays pending."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    app.config["WEATHER_ENDPOINT"] = closed
    source.configure(closed, tmp_path / "meteostat-cache", timeout_s=0.5)
