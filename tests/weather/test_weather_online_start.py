"""An inspection started with network access gets its weather at once, through the real app."""
from __future__ import annotations

import datetime as dt

from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.types import utcnow
from weather_fake import hours


def test_an_inspection_started_online_has_its_weather_and_station_on_the_report(
        app_meteostat, permit_at, make, signed_in):
    inspector = make.user("inspector")
    permit = permit_at("report", inspectors=[inspector])
    now = utcnow().replace(minute=0, second=0, microsecond=0)
    app_meteostat.publish_hourly("RPT1", hours(now - dt.timedelta(hours=30), 32, temp=10.0, prcp=0.3,
                                               wspd=12.0, wdir=200, coco=8))
    browser = signed_in(inspector)

    response = browser.post(f"/permits/{permit.id}/inspections", {"type": "erosion_control"})

    assert response.status_code == 303
    inspection = db.session.scalar(select(Inspection))
    assert inspection.weather_status == "complete"
    assert inspection.station_id == "RPT1" and inspection.precip_hours == 24
    assert abs(inspection.precip_24h_mm - 7.2) < 0.01  # 24 hours of 0.3 mm: a storm-sized day
    page = browser.get(response.headers["Location"]).text
    assert "Report Field" in page and "RPT1" in page
    assert "0.28 in" in page  # 7.2 mm shown in inches
    assert "Meteostat" in page  # the data source's attribution is shown with the weather
