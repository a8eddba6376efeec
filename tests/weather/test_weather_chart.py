"""The permit page's rainfall chart: 60 days of rain as inline SVG with the 0.25 in line, storm events
and the inspections that answered them; loaded lazily, only for people who may see the permit."""
from __future__ import annotations

import datetime as dt
import re
import time
from zoneinfo import ZoneInfo

import pytest
import sqlalchemy as sa

from inspect_app.extensions import db
from inspect_app.weather import services
from inspect_app.weather.models import PermitStation, WeatherObservation
from tests.databases import recorded_statements
from weather_fake import Hour, hours

UTC = dt.UTC
EASTERN = ZoneInfo("America/New_York")


def local_noon(day: dt.date, hour: int = 12) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(hour), tzinfo=EASTERN).astimezone(UTC)


@pytest.fixture
def rainy_permit(app_meteostat, permit_at, report):
    """A permit whose station saw 8.0 mm ten days ago and 6.1 mm (0.24 in) twenty days ago; the sweep
    has recorded the storm and one submitted report followed it the next morning."""
    today = dt.datetime.now(EASTERN).date()
    start = dt.datetime.combine(today - dt.timedelta(days=70), dt.time(), tzinfo=EASTERN).astimezone(UTC)
    app_meteostat.publish_hourly("CHT1", hours(start, 80 * 24, prcp=0.0, temp=10.0))
    storm_day, wet_day = today - dt.timedelta(days=10), today - dt.timedelta(days=20)
    app_meteostat.publish_hourly("CHT1", [Hour(local_noon(storm_day) + dt.timedelta(hours=i), prcp=2.0)
                                          for i in range(4)])
    app_meteostat.publish_hourly("CHT1", [Hour(local_noon(wet_day), prcp=6.1)])
    permit = permit_at("chart")
    services.sweep_storms(30)
    answered = report(permit, local_noon(storm_day + dt.timedelta(days=1), 9), status="submitted")
    report(permit, local_noon(storm_day + dt.timedelta(days=1), 10))  # a draft answers nothing
    report(permit, local_noon(storm_day + dt.timedelta(days=4), 9), status="submitted")  # too late
    db.session.commit()
    return permit, storm_day, wet_day, answered


def bar_top(svg: str, day: dt.date) -> float:
    """The y of the top of a day's bar (smaller is higher)."""
    match = re.search(r'<rect class="rain-bar[^"]*"[^>]* y="([\d.]+)"[^>]*><title>'
                      + re.escape(day.strftime("%b %-d")) + ":", svg)
    assert match, f"no bar for {day}"
    return float(match.group(1))


def test_the_chart_draws_the_threshold_the_storm_and_the_inspection_that_answered_it(
        rainy_permit, make, signed_in):
    permit, storm_day, wet_day, answered = rainy_permit
    agent = signed_in(make.user("agent"))

    response = agent.get(f"/permits/{permit.id}/rainfall", htmx="rainfall")

    assert response.status_code == 200
    assert "HX-Target" in response.headers["Vary"]
    html = response.text
    assert "<html" not in html  # the fragment the permit page swaps in
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert 'role="img"' in svg and f'aria-labelledby="rainfall-{permit.id}-title' in svg
    assert f"<title id=\"rainfall-{permit.id}-title\">Daily rainfall at permit {permit.number}" in svg
    assert svg.count('class="rain-bar') == 60
    threshold = re.search(r'<line class="storm-threshold"[^>]* y1="([\d.]+)"', svg)
    assert threshold and "0.25 in storm threshold" in svg
    # 8.0 mm rises above the 0.25 in line, 6.1 mm (0.24 in) stays below it.
    assert bar_top(svg, storm_day) < float(threshold.group(1)) < bar_top(svg, wet_day)
    markers = re.findall(r'<path class="storm-marker"[^>]*><title>([^<]+)</title>', svg)
    assert markers == [f"Storm event {storm_day:%b %-d}: 0.31 in"]
    inspections = re.findall(r'<circle class="storm-inspection"[^>]*><title>([^<]+)</title>', svg)
    assert len(inspections) == 1
    assert f"after the storm of {storm_day:%b %-d}" in inspections[0]
    # The same facts as a table, for anyone who cannot see the picture.
    assert "Rainfall as a table" in html
    row = re.search(r"<th scope=\"row\">" + re.escape(storm_day.strftime("%a %b %-d, %Y"))
                    + r"</th>(.*?)</tr>", html, re.S)
    assert row and "0.31 in" in row.group(1) and "Storm" in row.group(1)
    assert "Chart Valley Airport (CHT1)" in html and "Meteostat (CC BY 4.0)" in html


def test_the_chart_uses_stored_hours_and_asks_meteostat_at_most_hourly(
        rainy_permit, app_meteostat, make, signed_in):
    permit, *_ = rainy_permit
    agent = signed_in(make.user("agent"))
    agent.get(f"/permits/{permit.id}/rainfall", htmx="rainfall")
    asked = len(app_meteostat.requests)

    with recorded_statements() as statements:
        again = agent.get(f"/permits/{permit.id}/rainfall", htmx="rainfall")

    assert again.status_code == 200 and again.text.count('class="rain-bar') == 60
    assert len(app_meteostat.requests) == asked
    # Within the hour it asked, the chart knows every hour up to now without reading which it holds: the user,
    # the permit, its station (with when the station was last asked), the stored rain, the storms and the
    # inspections that answered them.
    assert len(statements) <= 6, "\n".join(s[:100] for s in statements)
    assert not [s for s in statements if s.startswith("SELECT weather_observations.hour ")]


def test_the_permit_page_loads_the_chart_lazily_and_never_waits_on_meteostat(
        app_meteostat, permit_at, make, signed_in):
    permit = permit_at("chart")
    agent = signed_in(make.user("agent"))
    asked = len(app_meteostat.requests)

    page = agent.get(f"/permits/{permit.id}")

    assert page.status_code == 200
    assert (f'hx-get="/permits/{permit.id}/rainfall" hx-trigger="load"' in page.text)
    assert len(app_meteostat.requests) == asked
    whole = agent.get(f"/permits/{permit.id}/rainfall")  # without htmx: a page of its own
    assert whole.status_code == 200 and "<html" in whole.text and "<svg" in whole.text


def test_only_people_who_may_see_the_permit_get_its_chart(app_meteostat, permit_at, make, signed_in,
                                                           client):
    owner, stranger = make.user("permittee"), make.user("permittee")
    assigned, other_inspector = make.user("inspector"), make.user("inspector")
    permit = permit_at("chart", owner=owner, inspectors=[assigned])
    other_town_agent = make.user("agent", town="southborough")
    url = f"/permits/{permit.id}/rainfall"
    asked = len(app_meteostat.requests)

    assert client.get(url).status_code == 302  # to the login page
    for user in (stranger, other_inspector, other_town_agent):
        assert signed_in(user).get(url, htmx="rainfall").status_code == 404
    assert len(app_meteostat.requests) == asked  # refused before anything is fetched
    for user in (owner, assigned):
        assert signed_in(user).get(url, htmx="rainfall").status_code == 200
    assert signed_in(make.user("agent")).get("/permits/no-such-permit/rainfall").status_code == 404


def test_a_hung_weather_server_gives_a_pending_chart_within_the_deadline(
        app, app_meteostat, permit_at, make, signed_in, quiet_workers, short_socket_timeout):
    permit = permit_at("chart")
    agent = signed_in(make.user("agent"))
    today = dt.datetime.now(EASTERN).date()
    paths = {f"/hourly/{year}/CHT1.csv.gz" for year in {today.year, (today - dt.timedelta(days=59)).year}}
    for path in paths:
        app_meteostat.hang(path)
    app.config["WEATHER_DEADLINE_S"] = 0.3
    try:
        started = time.monotonic()
        response = agent.get(f"/permits/{permit.id}/rainfall", htmx="rainfall")
        elapsed = time.monotonic() - started
    finally:
        for path in paths:
            app_meteostat.serve(path)

    assert elapsed < 0.3 + 0.5
    assert response.status_code == 200
    assert "Latest rainfall pending:</strong> the weather service did not answer within 0.3 s" in response.text
    assert response.text.count('class="rain-missing"') == 60 and "<svg" in response.text


# -- the chart serves from stored station-hours (issue 18) -------------------------------------

def hourly_files(fake, since: int) -> list[str]:
    """The yearly hourly files the fake served after the first `since` requests."""
    return [path for path in fake.requests[since:] if path.startswith("/hourly/")]


def stored_hours(station_id: str) -> tuple[int, dt.datetime | None]:
    """How many hours of a station we keep, and when the newest of them was stored."""
    rows = db.session.execute(sa.select(sa.func.count(), sa.func.max(WeatherObservation.fetched_at))
                              .where(WeatherObservation.station_id == station_id)).one()
    return rows[0], rows[1]


def test_a_second_permit_of_the_same_station_charts_from_stored_hours_without_a_fetch(
        rainy_permit, app_meteostat, permit_at, make, signed_in):
    permit, storm_day, *_ = rainy_permit
    agent = signed_in(make.user("agent"))
    first = agent.get(f"/permits/{permit.id}/rainfall", htmx="rainfall")
    neighbour = permit_at("chart")  # the same site: its nearest station with rain is CHT1 too
    held = stored_hours("CHT1")
    asked = len(app_meteostat.requests)

    second = agent.get(f"/permits/{neighbour.id}/rainfall", htmx="rainfall")

    assert second.status_code == 200 and "Chart Valley Airport (CHT1)" in second.text
    assert hourly_files(app_meteostat, asked) == []  # no weather file fetched
    assert stored_hours("CHT1") == held  # and nothing stored again
    bars = lambda html: re.findall(r'<rect class="rain-bar[^"]*"[^>]*><title>([^<]+)</title>', html)  # noqa: E731
    assert bars(second.text) == bars(first.text) and len(bars(second.text)) == 60


def _clear_of_the_hour() -> None:
    """Wait out a clock hour's last two minutes: a test run across o'clock rightly sees one more hour to ask for."""
    now = dt.datetime.now(UTC)
    if now.minute >= 58:
        time.sleep(60 * (60 - now.minute) - now.second + 1)


def test_after_the_hour_the_chart_asks_only_for_the_hours_it_does_not_hold(
        app_meteostat, permit_at, make, signed_in):
    _clear_of_the_hour()
    now = dt.datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    app_meteostat.publish_hourly("RFL1", hours(now - dt.timedelta(days=70), 70 * 24 - 3, prcp=0.1, temp=9.0))
    permit, neighbour = permit_at("refill"), permit_at("refill")
    agent = signed_in(make.user("agent"))
    agent.get(f"/permits/{permit.id}/rainfall", htmx="rainfall")
    count, _ = stored_hours("RFL1")
    # The last hours are not published yet: another permit of the station does not ask again at once.
    asked = len(app_meteostat.requests)
    assert agent.get(f"/permits/{neighbour.id}/rainfall", htmx="rainfall").status_code == 200
    assert hourly_files(app_meteostat, asked) == []

    # Three more hours published, and the hour since the station was asked gone by.
    app_meteostat.publish_hourly("RFL1", hours(now - dt.timedelta(hours=3), 3, prcp=5.0, temp=9.0))
    db.session.execute(sa.update(PermitStation).values(rainfall_fetched_at=now - dt.timedelta(hours=2)))
    db.session.commit()
    asked = len(app_meteostat.requests)
    again = agent.get(f"/permits/{permit.id}/rainfall", htmx="rainfall")

    assert hourly_files(app_meteostat, asked) == [f"/hourly/{now.year}/RFL1.csv.gz"]  # this year's file only
    assert stored_hours("RFL1")[0] == count + 3  # just the new hours stored
    assert again.status_code == 200 and "Refill Field (RFL1)" in again.text


def test_a_stored_station_without_rain_is_passed_over_for_the_nearest_with_rain(
        app_meteostat, permit_at, make, signed_in):
    now = dt.datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    app_meteostat.publish_hourly("TMP2", hours(now - dt.timedelta(days=70), 70 * 24, temp=11.0))
    app_meteostat.publish_hourly("PCP2", hours(now - dt.timedelta(days=70), 70 * 24, prcp=0.3))
    agent = signed_in(make.user("agent"))
    first = permit_at("split_held")
    assert "Second Rain Mesonet (PCP2)" in agent.get(f"/permits/{first.id}/rainfall", htmx="rainfall").text
    asked = len(app_meteostat.requests)

    second = permit_at("split_held")
    chart = agent.get(f"/permits/{second.id}/rainfall", htmx="rainfall").text

    # Per parameter, the nearest station with data: the thermometer-only station is still fetched and
    # passed over; the rain station's hours are held, so its file is not fetched again.
    assert "Second Rain Mesonet (PCP2)" in chart
    assert [p for p in hourly_files(app_meteostat, asked) if "PCP2" in p] == []
    assert db.session.get(PermitStation, second.id).station_id == "PCP2"
