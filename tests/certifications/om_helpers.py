"""Dates for the O&M tests, counted on the town's calendar."""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

LOCAL = ZoneInfo("America/New_York")


def local_today() -> dt.date:
    """Today in Longmeadow."""
    return dt.datetime.now(LOCAL).date()
