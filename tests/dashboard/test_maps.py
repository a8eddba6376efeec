"""The maps: points given to disturbed areas and structures, the site map's list (with each area's
stabilization clock), the permits' map under the dashboard's filters, and the GeoJSON export's places."""
from __future__ import annotations

import json
import re
from html import unescape

from sqlalchemy import select

from inspect_app import create_app
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.permits.models import StormwaterStructure
from inspect_app.stabilization.models import DisturbedArea
from sync.services import create_device


def started_permit(make, record, days_ago: int = 20, **fields):
    """An active permit whose construction began `days_ago` days ago (local calendar)."""
    fields.setdefault("issued_on", record.local_day(days_ago + 30))
    return make.permit(construction_started_on=record.local_day(days_ago), **fields)


def text_of(page: str, element_id: str) -> str:
    """The words of the element with that id (up to its closing tag), as a reader sees them."""
    match = re.search(rf'<(\w+)[^>]*\bid="{re.escape(element_id)}"[^>]*>(.*?)</\1>', page, re.S)
    assert match, f"no element #{element_id} on the page"
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", match.group(2))).split())


def point_of(model, record_id: str) -> tuple[float | None, float | None]:
    db.session.expire_all()
    row = db.session.get(model, record_id)
    return row.latitude, row.longitude


def test_an_agent_gives_an_area_and_a_structure_their_points(make, signed_in):
    permit = make.permit(areas=["Lot 1"], structures=["Pipe run P-1"])
    area, structure = permit.areas[0], permit.structures[0]
    agent = signed_in(make.user("agent"))

    response = agent.post(f"/permits/{permit.id}/points", {"point-subject": f"area:{area.id}",
                                                           "point-latitude": "42.05031", "point-longitude": "-72.58212"})
    assert response.status_code == 303 and response.headers["Location"].endswith(f"/permits/{permit.id}#site-map")
    agent.post(f"/permits/{permit.id}/points", {"point-subject": f"structure:{structure.id}",
                                                "point-latitude": "42.0499", "point-longitude": "-72.5830"})

    assert point_of(DisturbedArea, area.id) == (42.05031, -72.58212)
    assert point_of(StormwaterStructure, structure.id) == (42.0499, -72.583)
    page = agent.get(f"/permits/{permit.id}").text
    assert "42.050310, -72.582120" in text_of(page, f"point-area-{area.id}")
    assert "42.049900, -72.583000" in text_of(page, f"point-structure-{structure.id}")
    assert f'data-lat="42.05031" data-lon="-72.58212"' in page  # what the map draws
    actions = db.session.scalars(select(AuditEntry.action).where(AuditEntry.permit_id == permit.id)).all()
    assert {"area.point", "structure.point"} <= set(actions)


def test_a_tablet_holding_the_permit_gets_the_points_in_its_sync_snapshot(make, signed_in, client):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"], structures=["Basin B-1"])
    area = permit.areas[0]
    signed_in(inspector).post(f"/permits/{permit.id}/points", {"point-subject": f"area:{area.id}",
                                                               "point-latitude": "42.0506", "point-longitude": "-72.5819"})
    _device, token = create_device(None, inspector, "tablet")
    db.session.commit()

    snapshot = client.get(f"/sync/permits/{permit.id}/snapshot", headers={"Authorization": f"Bearer {token}"}).json
    assert [(a["name"], a["latitude"], a["longitude"]) for a in snapshot["areas"]] == [("Lot 1", 42.0506, -72.5819)]
    assert [(s["name"], s["latitude"], s["longitude"]) for s in snapshot["structures"]] == [("Basin B-1", None, None)]


def test_bad_points_are_refused_beside_the_field_and_nothing_changes(make, signed_in):
    permit = make.permit(areas=["Lot 1"])
    other = make.permit(areas=["Elsewhere"])
    area = permit.areas[0]
    agent = signed_in(make.user("agent"))
    url = f"/permits/{permit.id}/points"

    cases = [
        ({"point-latitude": "95", "point-longitude": "-72.5"}, "A latitude is between -90 and 90 degrees."),
        ({"point-latitude": "42.05", "point-longitude": "-190"}, "A longitude is between -180 and 180 degrees"),
        ({"point-latitude": "north", "point-longitude": "-72.5"}, "Not a valid float value."),
        ({"point-latitude": "NaN", "point-longitude": "-72.5"}, "Enter a number."),
        ({"point-latitude": "", "point-longitude": ""}, "Tap the map or use this device's location"),
        ({"point-subject": "", "point-latitude": "42.05", "point-longitude": "-72.5"},
         "Choose the area, structure or easement to place."),
        ({"point-subject": f"area:{other.areas[0].id}", "point-latitude": "42.05", "point-longitude": "-72.5"},
         "Choose an area, structure or easement of this permit."),
    ]
    for fields, message in cases:
        response = agent.post(url, {"point-subject": f"area:{area.id}", **fields})
        assert response.status_code == 422, fields
        assert message in text_of(response.text, "point-form"), fields

    assert point_of(DisturbedArea, area.id) == (None, None)
    assert point_of(DisturbedArea, other.areas[0].id) == (None, None)


def test_another_towns_permit_is_not_found_and_an_inspector_places_areas_only(make, signed_in):
    permit = make.permit(areas=["Lot 1"], structures=["Basin B-1"])
    area, structure = permit.areas[0], permit.structures[0]
    point = {"point-latitude": "42.05", "point-longitude": "-72.58"}

    stranger = signed_in(make.user("agent", town="southborough"))
    response = stranger.post(f"/permits/{permit.id}/points", {"point-subject": f"area:{area.id}", **point})
    assert response.status_code == 404

    inspector = make.user("inspector")
    make_assigned = make.permit(inspectors=[inspector], areas=["Pad"], structures=["Basin B-2"])
    client = signed_in(inspector)
    page = client.get(f"/permits/{make_assigned.id}").text
    assert "Basin B-2" not in text_of(page, "point-subject")  # structures are the agent's to edit
    refused = client.post(f"/permits/{make_assigned.id}/points",
                          {"point-subject": f"structure:{make_assigned.structures[0].id}", **point})
    assert refused.status_code == 422 and "Choose an area, structure or easement of this permit." in refused.text
    assert client.post(f"/permits/{make_assigned.id}/points",
                       {"point-subject": f"area:{make_assigned.areas[0].id}", **point}).status_code == 303
    assert point_of(DisturbedArea, make_assigned.areas[0].id) == (42.05, -72.58)
    assert point_of(StormwaterStructure, structure.id) == (None, None)


def test_an_areas_marker_shows_its_stabilization_clock_from_the_schedule(make, record, signed_in):
    permit = started_permit(make, record, areas=[])
    ceased = record.area(permit, "Lot 1", record.ago(days=12), ("activity_ceased", record.ago(days=10)))
    working = record.area(permit, "Lot 2", record.ago(days=3))
    page = signed_in(make.user("agent")).get(f"/permits/{permit.id}").text

    lot1 = text_of(page, f"point-area-{ceased.id}")
    # Longmeadow §380-11 C(3)(a): seven days after activity ceased; ten days ago it stopped: late.
    assert "Area Lot 1" in lot1 and "Activity ceased" in lot1
    assert re.search(r"Stabilization (started|completed) by \w{3} \d+, \d{4} .*: \d+ days late", lot1), lot1
    assert 'data-status="overdue"' in page.split(f'id="point-area-{ceased.id}"', 1)[1].split(">", 1)[0]
    assert "No stabilization clock running." in text_of(page, f"point-area-{working.id}")
    assert "No point on the map yet." in text_of(page, f"point-area-{working.id}")


def test_the_permit_pages_clocks_are_the_schedules_own(make, record):
    """The permit page takes its site map's clocks from the open obligations it read for "What to do now"
    (`clocks_of`): the same as the schedule's stored clocks the dashboard's map reads (`stabilization_clocks`)."""
    from inspect_app.pages.dashboard.services import clocks_of, permit_open, stabilization_clocks
    from inspect_app.permits.models import Permit
    from inspect_app.types import utcnow

    permit = started_permit(make, record, areas=[])
    record.area(permit, "Lot 1", record.ago(days=12), ("activity_ceased", record.ago(days=10)))
    record.area(permit, "Lot 2", record.ago(days=12), ("activity_ceased", record.ago(days=2)))
    record.area(permit, "Lot 3", record.ago(days=12), ("activity_ceased", record.ago(days=9)),
                ("stabilization_initiated", record.ago(days=5)))
    record.area(permit, "Lot 4", record.ago(days=3))
    now = utcnow()

    clocks = stabilization_clocks(select(Permit.id).where(Permit.id == permit.id), now)
    assert len(clocks) == 3  # Lot 4 is still worked: no clock
    assert clocks_of(permit_open(permit.id, now)) == clocks


def test_the_permits_map_colours_each_by_its_worst_status_under_the_dashboards_filters(make, record, signed_in):
    late = started_permit(make, record, number="LM-MAP-1")
    record.corrective_action(late, found=record.ago(days=10))
    fresh = make.permit(number="LM-MAP-2", issued_on=record.local_day(1))
    make.permit(town="southborough", number="SB-MAP-1")
    agent = signed_in(make.user("agent"))

    page = agent.get("/dashboard/map").text
    assert "LM-MAP-1" in text_of(page, f"map-permit-{late.id}") and "Overdue" in text_of(page, f"map-permit-{late.id}")
    assert "SB-MAP-1" not in page  # another town's permit
    assert re.search(rf'id="map-permit-{late.id}"[^>]*data-status="overdue"', page)
    assert re.search(rf'id="map-permit-{fresh.id}"[^>]*data-status="(due|clear)"', page)

    # The same filters as the dashboard: only corrective actions counted; an inspector none of them has.
    page = agent.get("/dashboard/map?kind=pre_bury").text
    assert re.search(rf'id="map-permit-{late.id}"[^>]*data-status="clear"', page)
    assert "its Pre-bury inspection obligations" in text_of(page, "permit-map")
    nobody = make.user("inspector")
    assert "No permits match these filters." in agent.get(f"/dashboard/map?inspector={nobody.id}").text
    # Unknown filter values are dropped, as on the dashboard.
    assert agent.get("/dashboard/map?kind=nonsense&days=x").status_code == 200


def test_the_map_is_for_agents(make, signed_in):
    assert signed_in(make.user("inspector")).get("/dashboard/map").status_code == 403


def test_geojson_gains_the_areas_and_structures_with_points(make, record, signed_in):
    permit = started_permit(make, record, number="LM-GJ-1", structures=["Outfall O-1"])
    area = record.area(permit, "Lot 1", record.ago(days=5), ("activity_ceased", record.ago(days=1)))
    record.area(permit, "Lot 2 (no point)", record.ago(days=5))
    agent = signed_in(make.user("agent"))
    agent.post(f"/permits/{permit.id}/points", {"point-subject": f"area:{area.id}",
                                                "point-latitude": "42.0507", "point-longitude": "-72.5821"})
    agent.post(f"/permits/{permit.id}/points", {"point-subject": f"structure:{permit.structures[0].id}",
                                                "point-latitude": "42.0497", "point-longitude": "-72.5835"})

    features = json.loads(agent.get("/dashboard/permits.geojson").text)["features"]
    by_name = {f["properties"].get("name", f["properties"]["permit"]): f for f in features}
    assert set(by_name) == {"LM-GJ-1", "Lot 1", "Outfall O-1"}
    assert by_name["LM-GJ-1"]["properties"]["feature"] == "permit"
    lot = by_name["Lot 1"]
    assert lot["id"] == area.id and lot["geometry"] == {"type": "Point", "coordinates": [-72.5821, 42.0507]}
    assert lot["properties"]["feature"] == "disturbed_area" and lot["properties"]["permit"] == "LM-GJ-1"
    assert lot["properties"]["status"] == "activity_ceased"
    assert lot["properties"]["stabilization"] == "Stabilization started"
    assert lot["properties"]["stabilization_due"] and lot["properties"]["stabilization_status"] in ("due", "overdue")
    outfall = by_name["Outfall O-1"]["properties"]
    assert outfall == {"feature": "structure", "permit": "LM-GJ-1", "name": "Outfall O-1", "kind": "pipe"}
    # Another town's agent sees none of them.
    stranger = signed_in(make.user("agent", town="southborough"))
    assert json.loads(stranger.get("/dashboard/permits.geojson").text)["features"] == []


def test_tiles_are_openstreetmaps_by_default_and_their_server_may_serve_images(app, make, signed_in):
    default = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": app.config["SQLALCHEMY_DATABASE_URI"]})
    assert default.config["MAP_TILE_URL"] == "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
    assert "OpenStreetMap" in default.config["MAP_TILE_ATTRIBUTION"]

    app.config["MAP_TILE_URL"] = "http://127.0.0.1:8123/tiles/{z}/{x}/{y}.png"
    permit = make.permit()
    response = signed_in(make.user("agent")).get(f"/permits/{permit.id}")
    assert "img-src 'self' blob: data: http://127.0.0.1:8123;" in response.headers["Content-Security-Policy"]
    assert 'data-tile-url="http://127.0.0.1:8123/tiles/{z}/{x}/{y}.png"' in response.text
