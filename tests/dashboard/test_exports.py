"""The inspector's iCalendar feed, and the GeoJSON and CSV exports of permits with their status."""
from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
from zoneinfo import ZoneInfo

from sqlalchemy import select

from inspect_app.accounts.services import set_enabled
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db

ET = ZoneInfo("America/New_York")


def started_permit(make, record, days_ago: int = 20, **fields):
    fields.setdefault("issued_on", record.local_day(days_ago + 30))
    return make.permit(construction_started_on=record.local_day(days_ago), **fields)


def unfold(text: str) -> list[str]:
    """RFC 5545 §3.1: content lines end in CRLF; a line starting with a space continues the previous one."""
    assert text.endswith("\r\n")
    physical = text[:-2].split("\r\n")
    assert all("\n" not in line and "\r" not in line for line in physical)
    assert all(len(line.encode()) <= 75 for line in physical)
    lines: list[str] = []
    for line in physical:
        if line.startswith(" "):
            lines[-1] += line[1:]
        else:
            lines.append(line)
    return lines


def events(lines: list[str]) -> list[dict[str, str]]:
    found, current = [], None
    for line in lines:
        if line == "BEGIN:VEVENT":
            current = {}
        elif line == "END:VEVENT":
            found.append(current)
            current = None
        elif current is not None:
            name, _, value = line.partition(":")
            current[name] = value
    return found


def test_calendar_feed_is_valid_icalendar_with_the_inspections_due(make, record, signed_in):
    inspector = make.user("inspector")
    permit = started_permit(make, record, number="LM-CAL-1", inspectors=[inspector],
                            site_address="1 Long Street; Lot 7, Longmeadow", cgp_schedule="every_14_days_and_storm")
    last = record.ago(days=3)
    record.inspection(permit, at=last)
    record.storm(permit, 0, depth_mm=10.0)  # 0.39 in today: a storm inspection is due within 24 hours
    record.corrective_action(permit, found=record.ago(days=10))  # not an inspection: not on the calendar
    other = started_permit(make, record, number="LM-CAL-OTHER")  # not assigned to this inspector
    record.inspection(other, at=record.ago(days=20))

    response = signed_in(inspector).get(f"/dashboard/inspectors/{inspector.id}/calendar.ics")
    assert response.status_code == 200
    assert response.mimetype == "text/calendar"
    lines = unfold(response.text)
    assert lines[0] == "BEGIN:VCALENDAR" and lines[-1] == "END:VCALENDAR"
    assert "VERSION:2.0" in lines and any(line.startswith("PRODID:") for line in lines)
    assert lines.count("BEGIN:VEVENT") == lines.count("END:VEVENT")
    found = events(lines)
    assert all(re.fullmatch(r"\d{8}T\d{6}Z", event["DTSTART"]) for event in found)
    assert all(re.fullmatch(r"\d{8}T\d{6}Z", event["DTSTAMP"]) for event in found)
    assert len({event["UID"] for event in found}) == len(found)
    assert all("LM-CAL-1" in event["SUMMARY"] for event in found)
    assert not any("Corrective" in event["SUMMARY"] for event in found)
    # The 14-day routine inspection: due at the end of the 14th local day after the last one.
    routine = [e for e in found if e["SUMMARY"].startswith("Erosion-control inspection")]
    assert len(routine) == 1
    due = dt.datetime.combine(last.astimezone(ET).date() + dt.timedelta(days=14), dt.time(23, 59, 59), tzinfo=ET)
    assert routine[0]["DTSTART"] == due.astimezone(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    assert "CGP 2022 Part 4.2" in routine[0]["DESCRIPTION"]
    storm = [e for e in found if e["SUMMARY"].startswith("Storm inspection")]
    assert len(storm) == 1 and "within 24 hours" in storm[0]["DESCRIPTION"]
    # TEXT values are escaped (RFC 5545 §3.3.11).
    assert routine[0]["LOCATION"] == "1 Long Street\\; Lot 7\\, Longmeadow"


def test_calendar_is_for_the_inspector_and_their_towns_agents_only(make, record, signed_in):
    inspector = make.user("inspector")
    permit = started_permit(make, record, inspectors=[inspector], owner=make.user("permittee"))
    record.inspection(permit, at=record.ago(days=3))
    url = f"/dashboard/inspectors/{inspector.id}/calendar.ics"
    assert signed_in(make.user("agent")).get(url).status_code == 200
    assert signed_in(make.user("inspector")).get(url).status_code == 403
    assert signed_in(make.user("permittee")).get(url).status_code == 403
    # An engineer with no permit in the agent's town is no one that town may look up (not even by name).
    assert signed_in(make.user("agent", town="southborough")).get(url).status_code == 404
    assert signed_in(make.user("agent")).get("/dashboard/inspectors/nobody/calendar.ics").status_code == 404


def test_geojson_is_a_feature_collection_of_lon_lat_points(make, record, signed_in):
    permit = started_permit(make, record, number="LM-GEO-1", latitude=42.0512, longitude=-72.5831)
    record.corrective_action(permit, found=record.ago(days=10))
    record.corrective_action(permit, found=record.ago(days=12))
    started_permit(make, record, number="LM-GEO-2", latitude=42.06, longitude=-72.57)
    make.permit(town="southborough", number="SB-GEO-1", latitude=42.30, longitude=-71.53)

    response = signed_in(make.user("agent")).get("/dashboard/permits.geojson")
    assert response.status_code == 200 and response.mimetype == "application/geo+json"
    data = json.loads(response.text)
    assert data["type"] == "FeatureCollection"
    by_number = {f["properties"]["permit"]: f for f in data["features"]}
    assert set(by_number) == {"LM-GEO-1", "LM-GEO-2"}
    feature = by_number["LM-GEO-1"]
    assert feature["type"] == "Feature"
    assert feature["geometry"] == {"type": "Point", "coordinates": [-72.5831, 42.0512]}
    assert feature["properties"]["status"] == "active"
    # Two overdue repairs, and the missed weekly inspections since construction began with none made.
    assert feature["properties"]["overdue"] >= 2
    assert feature["properties"]["overdue"] > by_number["LM-GEO-2"]["properties"]["overdue"]


def test_csv_has_a_header_and_one_row_per_visible_permit(make, record, signed_in):
    owner = make.user("permittee")
    mine = started_permit(make, record, number="LM-CSV-1", owner=owner, site_address="=HYPERLINK(\"x\")")
    record.corrective_action(mine, found=record.ago(days=10))
    started_permit(make, record, number="LM-CSV-2")
    started_permit(make, record, number="LM-CSV-3")

    agent_rows = list(csv.reader(io.StringIO(signed_in(make.user("agent")).get("/dashboard/permits.csv").text)))
    header, body = agent_rows[0], agent_rows[1:]
    assert header[:6] == ["permit", "town", "site_address", "latitude", "longitude", "status"]
    assert sorted(row[0] for row in body) == ["LM-CSV-1", "LM-CSV-2", "LM-CSV-3"]
    first = dict(zip(header, next(row for row in body if row[0] == "LM-CSV-1")))
    assert first["site_address"].startswith("'=")  # never run as a spreadsheet formula
    assert float(first["longitude"]) == -72.5828 and int(first["overdue"]) >= 1

    response = signed_in(owner).get("/dashboard/permits.csv")
    assert response.mimetype == "text/csv"
    own_rows = list(csv.reader(io.StringIO(response.text)))
    assert [row[0] for row in own_rows[1:]] == ["LM-CSV-1"]


def test_permittee_exports_hold_only_their_own_permits(make, record, signed_in):
    owner = make.user("permittee")
    started_permit(make, record, number="OWN-1", owner=owner)
    started_permit(make, record, number="NOT-OWN-1", owner=make.user("permittee"))
    client = signed_in(owner)
    features = json.loads(client.get("/dashboard/permits.geojson").text)["features"]
    assert [f["properties"]["permit"] for f in features] == ["OWN-1"]
    assert "NOT-OWN-1" not in client.get("/dashboard/permits.csv").text
    assert signed_in(make.user("permittee")).get("/dashboard/permits.csv").text.count("\r\n") == 1  # header only


def test_a_calendar_app_reads_the_inspectors_feed_through_the_secret_link(make, record, signed_in, client):
    inspector = make.user("inspector")
    permit = started_permit(make, record, inspectors=[inspector], number="LM-CAL-1")
    record.inspection(permit, at=record.ago(days=3))
    browser = signed_in(inspector)
    assert browser.post("/dashboard/my-day/calendar-link").status_code == 303
    link = re.search(r'id="calendar-url"\s+value="([^"]+)"', browser.get("/dashboard/my-day").text).group(1)
    path = link.split("://", 1)[1].split("/", 1)[1]
    # A calendar app has no session: the link alone gives the same feed as the signed-in page.
    anonymous = client.get(f"/{path}")
    assert anonymous.status_code == 200 and anonymous.mimetype == "text/calendar"
    signed = browser.get(f"/dashboard/inspectors/{inspector.id}/calendar.ics").text
    assert [e["SUMMARY"] for e in events(unfold(anonymous.text))] == [e["SUMMARY"] for e in events(unfold(signed))]
    assert any("LM-CAL-1" in e["SUMMARY"] for e in events(unfold(anonymous.text)))
    # A new link replaces the old one; a disabled account's link opens nothing; a made-up one neither.
    assert browser.post("/dashboard/my-day/calendar-link").status_code == 303
    assert client.get(f"/{path}").status_code == 404
    new_link = re.search(r'id="calendar-url"\s+value="([^"]+)"', browser.get("/dashboard/my-day").text).group(1)
    new_path = new_link.split("://", 1)[1].split("/", 1)[1]
    assert client.get(f"/{new_path}").status_code == 200
    # A new password ends the link, as it ends every other way into the account.
    changed = browser.post("/account/password", {"current_password": "correct horse battery",
                                                 "new_password": "a brand new secret", "confirm": "a brand new secret"})
    assert changed.status_code == 303, changed.status_code
    assert "A calendar link you made stops working too" in browser.get(changed.location).text
    assert client.get(f"/{new_path}").status_code == 404
    assert browser.post("/dashboard/my-day/calendar-link").status_code == 303
    new_link = re.search(r'id="calendar-url"\s+value="([^"]+)"', browser.get("/dashboard/my-day").text).group(1)
    new_path = new_link.split("://", 1)[1].split("/", 1)[1]
    assert client.get(f"/{new_path}").status_code == 200
    admin = make.user("admin")
    set_enabled(admin, inspector, False)
    db.session.commit()
    assert client.get(f"/{new_path}").status_code == 404
    # Enabled again, the account's old link stays closed: a link someone kept while it was disabled opens nothing.
    set_enabled(admin, inspector, True)
    db.session.commit()
    assert client.get(f"/{new_path}").status_code == 404
    assert client.get("/calendar/not-a-key.ics").status_code == 404
    # The secret never reaches the audit log.
    assert all(new_path.rsplit("/", 1)[1].removesuffix(".ics") not in str(e.after)
               for e in db.session.scalars(select(AuditEntry)))


def test_only_inspectors_make_a_calendar_link(make, signed_in):
    for role in ("agent", "permittee"):
        browser = signed_in(make.user(role))
        assert browser.post("/dashboard/my-day/calendar-link").status_code == 403


def test_the_calendar_links_to_the_public_address_whatever_name_it_was_fetched_by(app, make, record, signed_in,
                                                                                   client):
    # Fetched through another name (an internal one behind the proxy), the feed linked to that name and its UIDs
    # ended in it: a calendar subscribed under both showed every event twice.
    inspector = make.user("inspector")
    permit = started_permit(make, record, inspectors=[inspector], number="LM-CAL-2")
    record.inspection(permit, at=record.ago(days=3))
    browser = signed_in(inspector)
    assert browser.post("/dashboard/my-day/calendar-link").status_code == 303
    link = re.search(r'id="calendar-url"\s+value="([^"]+)"', browser.get("/dashboard/my-day").text).group(1)
    public = app.config["PUBLIC_URL"]
    assert link.startswith(public + "/calendar/")
    path = "/" + link.removeprefix(public + "/")
    feeds = [client.get(path, base_url=base).text for base in ("http://localhost", "http://inspect.internal:8000")]
    assert [e["UID"] for e in events(unfold(feeds[0]))] == [e["UID"] for e in events(unfold(feeds[1]))]
    found = events(unfold(feeds[1]))
    host = public.split("://", 1)[1]
    assert found and all(e["UID"].endswith("@" + host) for e in found)
    assert all(e["URL"].startswith(public + "/") for e in found if "URL" in e)
    assert "inspect.internal" not in feeds[1]
