"""Storm events found in an hourly rain series (CGP 2022 Part 4.2; spec "Weather"). Pure: no I/O.

CGP 2022 Part 4.2: a storm event is 0.25 in or more of rain *within a 24-hour period* (several showers
that together reach it within 24 hours count), and the storm inspection is due within 24 hours of the
moment the rain reached that depth, even while it is still raining. So the clock is found from the hourly
record, never from calendar days:

- An hour is labelled by its end (meteostat's convention): the row labelled H holds the rain of the hour
  before H. The rolling 24-hour total at H is the rain of the rows labelled H−23 h … H.
- A storm is **reached** at the first label whose rolling total is at or above the threshold. We cannot
  tell when within that hour the depth was reached, so the label (the end of the hour) is the moment:
  the latest instant the rain can have reached it, which no inspection could have answered earlier.
- Multi-day storms (CGP 2022 Part 4.2, storms over several days each producing 0.25 in or more): day 1 is
  the 24 hours up to the moment the storm was reached, day 2 the 24 hours after it, and so on while each
  such period holds the threshold. The storm **ends** at its last hour of rain: the last rainy hour of its
  last such period, and any rain that follows it without a dry hour.
- After a storm, rain counts again only from the hour after its last period (or its end, if later), so
  one storm's rain never makes a second storm.
- Hours with no data are never read as zero. A total of the hours known that already reaches the
  threshold is a storm (the missing ones could only add to it), with the missing hours in its window
  said (`hours_missing`: the moment may really have been earlier); a missing hour anywhere else could
  hide a storm, so those hours are returned (`missing`) for the caller to report.
- Depths are added as whole tenths of a millimetre (meteostat's precision), so 16 × 0.4 mm is 6.4 mm,
  not 6.3999999, against the 6.35 mm (0.25 in) threshold.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass

from inspect_app.rules.facts import SnowmeltDischarge, Storm
from inspect_app.rules.trace import implements

HOUR = dt.timedelta(hours=1)
PERIOD_HOURS = 24  # CGP 2022 Part 4.2: "within a 24-hour period"
# A threshold converted from inches may land a hair above what the tenths add up to.
_TOLERANCE_TENTHS = 1e-6


@dataclass(frozen=True, slots=True)
class FoundStorm:
    """One storm event in an hourly series (UTC hour labels)."""

    start: dt.datetime  # the start of its first counted hour of rain
    reached_at: dt.datetime  # the label at which the rolling 24-hour total first reached the threshold
    ended_at: dt.datetime  # the label of its last hour of rain
    depth_mm: float  # the rain from `start` to `ended_at`
    periods: int  # 24-hour periods of the threshold or more: 2 or more is a multi-day storm
    hours_missing: int  # hours without data in the 24 hours up to `reached_at`
    ongoing: bool  # its next 24-hour period is not all published yet: it may go on

    @property
    def multi_day(self) -> bool:
        """CGP 2022 Part 4.2: a storm over several days, each producing the threshold or more."""
        return self.periods > 1

    def fact(self) -> Storm:
        """The storm as the schedule engine reads it."""
        return Storm(start=self.start, end=self.ended_at, depth_mm=self.depth_mm, reached_at=self.reached_at,
                     multi_day=self.multi_day)


@implements("CGP 2022 Part 4.2")
def gauge_storm(read_at: dt.datetime, depth_mm: float) -> Storm:
    """An on-site rain-gauge reading of the last 24 hours as a storm (CGP 2022 Part 4.2 lets a gauge
    stand for a station); the engine counts it only at or above the threshold.

    The reading says the rain reached its depth by `read_at`, no sooner: that is the moment.
    """
    return Storm(start=read_at - PERIOD_HOURS * HOUR, end=read_at, depth_mm=depth_mm, reached_at=read_at)


@dataclass(frozen=True, slots=True)
class StormScan:
    """What a series says: its storms, and the hours whose missing data could hide one."""

    storms: tuple[FoundStorm, ...]
    missing: tuple[dt.datetime, ...]  # labels with no data outside every storm found

    def missing_spans(self) -> tuple[tuple[dt.datetime, dt.datetime], ...]:
        """The missing labels as runs (first, last), in order."""
        spans: list[tuple[dt.datetime, dt.datetime]] = []
        for label in self.missing:
            if spans and label - spans[-1][1] == HOUR:
                spans[-1] = (spans[-1][0], label)
            else:
                spans.append((label, label))
        return tuple(spans)


@implements("CGP 2022 Part 4.2")
def find_storms(rain_mm: Mapping[dt.datetime, float | None], first: dt.datetime, last: dt.datetime,
                threshold_mm: float) -> StormScan:
    """The storm events of the hourly labels `first` … `last` (aware, on the hour, inclusive).

    `rain_mm` maps a UTC label to its rain (None or absent: no data for that hour). Rain before `first`
    is not known here: pass a `first` at least 24 hours before the earliest moment you ask about.
    """
    if first.utcoffset() is None or last.utcoffset() is None:
        raise ValueError("hour labels must be timezone-aware")
    if last < first:
        raise ValueError("last must not be before first")
    first, last = first.astimezone(dt.UTC), last.astimezone(dt.UTC)
    count = int((last - first) / HOUR) + 1
    labels = [first + i * HOUR for i in range(count)]
    tenths: list[int | None] = []
    for label in labels:
        value = rain_mm.get(label)
        tenths.append(None if value is None else round(value * 10))
    threshold = threshold_mm * 10 - _TOLERANCE_TENTHS

    prefix = [0]
    for value in tenths:
        prefix.append(prefix[-1] + (value or 0))

    def total(lo: int, hi: int) -> int:
        return prefix[hi + 1] - prefix[max(lo, 0)] if hi >= lo else 0

    storms: list[FoundStorm] = []
    in_storm = [False] * count
    floor = 0  # rain counts from this index on (after the last storm)
    i = 0
    while i < count:
        lo = max(floor, i - PERIOD_HOURS + 1)
        if total(lo, i) < threshold:
            i += 1
            continue
        reached = i
        first_rain = next(k for k in range(lo, i + 1) if tenths[k])
        missing_before = sum(1 for k in range(i - PERIOD_HOURS + 1, i + 1) if k < 0 or tenths[k] is None)
        periods, period_end, end, ongoing = 1, reached, reached, False
        while True:
            nxt_lo, nxt_hi = period_end + 1, period_end + PERIOD_HOURS
            if nxt_hi >= count or any(tenths[k] is None for k in range(nxt_lo, nxt_hi + 1)):
                # The next 24 hours are not all known: the storm may go on (or its second day may
                # hide in the gap); what is known of it already stands.
                ongoing = total(nxt_lo, min(nxt_hi, count - 1)) < threshold
                if not ongoing:
                    periods += 1
                    period_end = min(nxt_hi, count - 1)
                    end = max(k for k in range(nxt_lo, period_end + 1) if tenths[k])
                    continue
                break
            if total(nxt_lo, nxt_hi) < threshold:
                break
            periods += 1
            period_end = nxt_hi
            end = max(k for k in range(nxt_lo, nxt_hi + 1) if tenths[k])
        while end + 1 < count and tenths[end + 1]:
            end += 1  # rain that goes on without a dry hour is the same storm
        for k in range(first_rain, end + 1):
            in_storm[k] = True
        storms.append(FoundStorm(
            start=labels[first_rain] - HOUR, reached_at=labels[reached], ended_at=labels[end],
            depth_mm=total(first_rain, end) / 10, periods=periods, hours_missing=missing_before,
            ongoing=ongoing))
        floor = max(period_end, end) + 1
        i = floor
    missing = tuple(labels[k] for k in range(count) if tenths[k] is None and not in_storm[k])
    return StormScan(tuple(storms), missing)


# -- snowmelt (CGP 2022 Parts 4.2, 4.3) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FoundSnowmelt:
    """A snow storm in a station's hourly snow depth, and the first hour its snow melted (UTC hour labels)."""

    snowfall_at: dt.datetime  # the label at which the depth had risen by the threshold within 24 hours
    snow_mm: float  # how much the depth rose over the storm: the snow it produced, as the station saw it
    discharge_at: dt.datetime  # the first label after it with the air above freezing and the depth falling

    def fact(self) -> SnowmeltDischarge:
        """The discharge as the schedule engine reads it."""
        return SnowmeltDischarge(at=self.discharge_at, snow_mm=self.snow_mm)


def _above_freezing(celsius: float | None) -> bool:
    return celsius is not None and celsius > 0


@implements("CGP 2022 Parts 4.2-4.3 (snowmelt)")
def find_snowmelts(depth_cm: Mapping[dt.datetime, float | None], temperature_c: Mapping[dt.datetime, float | None],
                   first: dt.datetime, last: dt.datetime, threshold_mm: float) -> tuple[FoundSnowmelt, ...]:
    """The snowmelt discharges a station's hourly snow depth shows from `first` to `last` (aware hour labels).

    CGP 2022 Parts 4.2, 4.3: an inspection "within 24 hours of the occurrence of ... a snowmelt discharge from a
    storm event that produces 3.25 inches or more of snow within a 24-hour period". A station reports the snow
    on the ground, not the snowfall nor the site's discharge, so:

    - a **snow storm** is the depth rising by the threshold or more within 24 hours: the label at which the
      depth first stands that far above the lowest depth of the 24 hours before it; its snow is the rise from
      that lowest depth to the highest the depth reaches before it starts to fall;
    - its **snowmelt discharge** is taken to occur at the first later label at which the air is above 0 °C
      and the depth is below that highest depth: the earliest moment the melt can run off, so no inspection
      made before it answers it. A storm whose snow has not yet melted in the data gives nothing yet.

    Hours without a depth are skipped, never read as no snow. An inspector who sees a discharge on site
    records it as well (`conditions.services.record_snowmelt`); the two are one discharge for the engine.
    """
    if first.utcoffset() is None or last.utcoffset() is None:
        raise ValueError("hour labels must be timezone-aware")
    first, last = first.astimezone(dt.UTC), last.astimezone(dt.UTC)
    labels = [first + i * HOUR for i in range(int((last - first) / HOUR) + 1)] if last >= first else []
    known = [(label, depth_cm[label]) for label in labels if depth_cm.get(label) is not None]
    threshold_cm = threshold_mm / 10 - _TOLERANCE_TENTHS
    found: list[FoundSnowmelt] = []
    i = 0
    while i < len(known):
        label, depth = known[i]
        window = [d for at, d in known[:i + 1] if at > label - PERIOD_HOURS * HOUR]
        low = min(window)
        if depth - low < threshold_cm:
            i += 1
            continue
        # The storm: the depth goes on rising to its highest, then melts.
        peak, j = depth, i + 1
        while j < len(known) and known[j][1] >= peak:
            peak = known[j][1]
            j += 1
        melt = next((at for at, d in known[j:] if d < peak and _above_freezing(temperature_c.get(at))), None)
        if melt is None:
            break  # not melted yet, as far as the data goes
        found.append(FoundSnowmelt(snowfall_at=label, snow_mm=round((peak - low) * 10, 1), discharge_at=melt))
        i = next((k for k, (at, _) in enumerate(known) if at > melt), len(known))
    return tuple(found)
