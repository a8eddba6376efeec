"""The maps in a real headless Chromium: markers with tiles from a server on 127.0.0.1 and with none at all
(offline, the held permit page), a tap and the device's GPS giving an area its point, the permits' map under
the dashboard's filters."""
from __future__ import annotations

import re
import socket

import pytest
from playwright.sync_api import expect

from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.stabilization.models import DisturbedArea
from tests.offline.offline_helpers import hold_permits, outbox, sign_in_controlled, wait_for_outbox

pytestmark = pytest.mark.browser


def placed(permit, **points):
    """Give the permit's areas and structures (by name) their points, as the point form would."""
    for record in [*permit.areas, *permit.structures]:
        if record.name in points:
            permits.place(None, record, *points[record.name])
    db.session.commit()


def test_the_site_map_shows_its_markers_on_tiles_from_the_tile_server(make, live_server, page, sign_in, tile_server):
    permit = make.permit(areas=["Lot 1"], structures=["Basin B-1"])
    placed(permit, **{"Lot 1": (42.0504, -72.5822), "Basin B-1": (42.0498, -72.5833)})
    sign_in(page, make.user("agent"))
    page.goto(f"{live_server.url}/permits/{permit.id}")

    site = page.locator("#site-map-canvas")
    expect(site.locator("path.map-mark")).to_have_count(3)  # the site, the area, the structure
    expect(site.locator("path.map-mark-area")).to_have_count(1)
    expect(site.locator(".map-label", has_text="Area Lot 1")).to_be_visible()
    expect(site.locator(".map-label", has_text="Basin B-1")).to_be_visible()
    expect(site).to_have_attribute("data-tiles", "loaded")
    assert site.locator("img.leaflet-tile-loaded").count() > 0 and tile_server.served
    expect(site.locator(".leaflet-control-attribution")).to_contain_text("Test tiles")
    expect(page.locator("[data-no-tiles]")).to_be_hidden()


def test_without_tiles_the_markers_stand_on_a_grid_with_a_scale(make, live_server, page, sign_in, app):
    with socket.socket() as probe:  # a tile server that is not there
        probe.bind(("127.0.0.1", 0))
        app.config["MAP_TILE_URL"] = f"http://127.0.0.1:{probe.getsockname()[1]}/{{z}}/{{x}}/{{y}}.png"
    typed = "<b>Lot 1</b><img src=x>"  # an area's name is what someone typed: a label shows it as words
    permit = make.permit(areas=[typed])
    placed(permit, **{typed: (42.0504, -72.5822)})
    sign_in(page, make.user("agent"))
    page.goto(f"{live_server.url}/permits/{permit.id}")

    site = page.locator("#site-map-canvas")
    expect(site.locator("path.map-mark")).to_have_count(2)
    expect(site.locator(".map-label", has_text=f"Area {typed}")).to_be_visible()
    assert site.locator(".map-label b, .map-label img").count() == 0
    expect(page.locator("[data-no-tiles]")).to_be_visible()
    expect(site).to_have_attribute("data-tiles", "none")
    assert site.locator(".map-grid-tile").count() > 0
    expect(site.locator(".leaflet-control-scale-line").first).to_contain_text("m")


def test_the_held_permit_page_shows_its_site_offline(make, live_server, page, sign_in, tile_server):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"], structures=["Basin B-1"])
    placed(permit, **{"Lot 1": (42.0504, -72.5822), "Basin B-1": (42.0498, -72.5833)})
    sign_in(page, inspector, controlled=True)
    hold_permits(page, live_server)

    page.context.set_offline(True)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    expect(page.locator("h1")).to_contain_text(permit.number)
    site = page.locator("#site-map-canvas")
    expect(site.locator("path.map-mark")).to_have_count(3)
    expect(page.locator("[data-no-tiles]")).to_be_visible()
    expect(site.locator(".map-label", has_text="Area Lot 1")).to_be_visible()


def test_a_tap_on_the_map_and_the_devices_gps_give_an_area_its_point(make, live_server, page, sign_in):
    permit = make.permit(areas=["Lot 1", "Lot 2"])
    lot1, lot2 = permit.areas
    sign_in(page, make.user("agent"))
    page.goto(f"{live_server.url}/permits/{permit.id}")

    site = page.locator("#site-map-canvas")
    expect(site.locator("path.map-mark")).to_have_count(1)  # only the site so far
    site.scroll_into_view_if_needed()
    box = site.bounding_box()
    site.click(position={"x": box["width"] * 0.7, "y": box["height"] * 0.3})  # north-east of the site
    latitude, longitude = page.input_value("#point-latitude"), page.input_value("#point-longitude")
    assert float(latitude) > permit.latitude and float(longitude) > permit.longitude
    expect(site.locator("path.map-mark-chosen")).to_have_count(1)
    page.select_option("#point-subject", f"area:{lot1.id}")
    page.click("button:has-text('Save the point')")
    expect(page.locator(f"#point-area-{lot1.id}")).to_contain_text(f"{float(latitude):.6f}, {float(longitude):.6f}")
    expect(site.locator("path.map-mark-area")).to_have_count(1)

    page.context.grant_permissions(["geolocation"], origin=live_server.url)
    page.context.set_geolocation({"latitude": 42.049812, "longitude": -72.583377})
    page.click("button:has-text(\"Use this device's location\")")
    expect(page.locator("#point-latitude")).to_have_value("42.049812")
    expect(page.locator("#point-longitude")).to_have_value("-72.583377")
    page.select_option("#point-subject", f"area:{lot2.id}")
    page.click("button:has-text('Save the point')")
    expect(page.locator(f"#point-area-{lot2.id}")).to_contain_text("42.049812, -72.583377")
    db.session.expire_all()
    assert (db.session.get(DisturbedArea, lot2.id).latitude, db.session.get(DisturbedArea, lot2.id).longitude) \
        == (42.049812, -72.583377)


def test_a_point_tapped_offline_waits_in_the_outbox_and_arrives_once(make, server, page):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    area = permit.areas[0]
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)

    page.context.set_offline(True)
    page.goto(f"{server.url}/permits/{permit.id}")
    site = page.locator("#site-map-canvas")
    expect(site.locator("path.map-mark")).to_have_count(1)
    site.scroll_into_view_if_needed()
    box = site.bounding_box()
    site.click(position={"x": box["width"] * 0.25, "y": box["height"] * 0.75})  # south-west of the site
    latitude, longitude = float(page.input_value("#point-latitude")), float(page.input_value("#point-longitude"))
    page.select_option("#point-subject", f"area:{area.id}")
    page.click("button:has-text('Save the point')")
    expect(page.locator("#offline-message")).to_contain_text("Saved on this device")
    assert [item["url"] for item in outbox(page)] == [f"/permits/{permit.id}/points"]
    db.session.expire_all()
    assert db.session.get(DisturbedArea, area.id).latitude is None

    page.context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: not items)
    db.session.expire_all()
    stored = db.session.get(DisturbedArea, area.id)
    assert (round(stored.latitude, 6), round(stored.longitude, 6)) == (round(latitude, 6), round(longitude, 6))
    assert latitude < permit.latitude and longitude < permit.longitude


def test_the_permits_map_colours_markers_and_follows_the_filters(make, record, live_server, page, sign_in):
    late = make.permit(number="LM-MAP-1", issued_on=record.local_day(40), construction_started_on=record.local_day(20))
    record.corrective_action(late, found=record.ago(days=10))
    make.permit(number="LM-MAP-2", latitude=42.06, longitude=-72.57)
    sign_in(page, make.user("agent"))
    page.goto(f"{live_server.url}/dashboard/map")

    canvas = page.locator("#permit-map-canvas")
    expect(canvas.locator("path.map-mark-permit")).to_have_count(2)
    expect(canvas.locator("path.map-status-overdue")).to_have_count(1)
    page.select_option("select[name=kind]", "pre_bury")  # the dashboard's filter: only pre-bury counted
    expect(page).to_have_url(re.compile(r"/dashboard/map\?.*kind=pre_bury"))  # pushed: the view can be shared
    expect(page.locator("#permit-map-canvas path.map-mark-permit")).to_have_count(2)
    expect(page.locator("#permit-map-canvas path.map-status-overdue")).to_have_count(0)
    page.locator("#permit-map-canvas path.map-mark-permit").first.click()
    expect(page.locator(".leaflet-popup-content")).to_contain_text("LM-MAP")
    # Its link opens the permit page in place (hx-boost, no new document): the site map is drawn there too.
    page.evaluate("window.sameDocument = true")
    page.locator(".leaflet-popup-content a").click()
    expect(page.locator("h1")).to_contain_text("Permit LM-MAP")
    assert page.evaluate("window.sameDocument === true")
    expect(page.locator("#site-map-canvas path.map-mark-site")).to_have_count(1)
