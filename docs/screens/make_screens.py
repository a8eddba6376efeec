"""Screenshots of the app for the docs, run by hand (not part of `make test`):

    .venv/bin/python docs/screens/make_screens.py

Starts the app on 127.0.0.1 with the demo data (`flask demo load`) in a throwaway SQLite database, gives
the demo a little recent history (an area whose work stopped a week ago, so *What to do now* has a
stabilization clock beside the inspections), signs in as each page's user in Debian's Chromium and saves
`<page>-<width>x<height>.png` beside this script for every page of PAGES at every size of SIZES.
A new page is one line of PAGES.
"""
from __future__ import annotations

import datetime as dt
import logging
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from playwright.sync_api import sync_playwright  # noqa: E402
from sqlalchemy import select  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from inspect_app import create_app  # noqa: E402
from inspect_app.demo import DEMO_PASSWORD, load_demo  # noqa: E402
from inspect_app.extensions import db  # noqa: E402
from inspect_app.permits import services as permits  # noqa: E402
from inspect_app.permits.models import Permit  # noqa: E402
from inspect_app.types import utcnow  # noqa: E402

HERE = Path(__file__).resolve().parent
SIZES = ((1024, 768), (390, 844))
CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if Path(p).exists()), None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# The demo permit the permit pages show.
PERMIT = "SWP-2026-014"


@dataclass(frozen=True)
class Screen:
    """One screenshot: its file name, the demo user who looks, and the path (`{permit}`: PERMIT's id)."""

    name: str
    user: str
    path: str


PAGES = (
    Screen("permit-page", "engineer@example.org", "/permits/{permit}"),
    Screen("dashboard", "agent@longmeadow.example.org", "/dashboard/"),
    Screen("map", "agent@longmeadow.example.org", "/dashboard/map"),
    Screen("report-form", "engineer@example.org", "/permits/{permit}/inspections/new/erosion_control"),
    Screen("my-day", "engineer@example.org", "/dashboard/my-day"),
)


def demo_app():
    """The app on a fresh database with the demo records and a week-old stop of work on one area."""
    root = Path(tempfile.mkdtemp())
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{root / 'screens.sqlite3'}",
                      "BLOB_ROOT": str(root / "blobs"), "WEATHER_ENDPOINT": "http://127.0.0.1:9",
                      # No outside tile server: the maps draw their plain grid and scale.
                      "MAP_TILE_URL": ""})
    with app.app_context():
        db.create_all()
        load_demo()
        permit = db.session.scalar(select(Permit).where(Permit.number == PERMIT))
        pad = next(a for a in permit.areas if a.name == "Lot 1 building pad")
        permits.change_area_status(None, pad, "activity_ceased", utcnow() - dt.timedelta(days=8))
        db.session.commit()
        return app, permit.id


def main() -> None:
    app, permit_id = demo_app()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            for screen in PAGES:
                for width, height in SIZES:
                    context = browser.new_context(viewport={"width": width, "height": height},
                                                  service_workers="block")
                    page = context.new_page()
                    page.goto(f"{base}/login")
                    page.fill("input[name=email]", screen.user)
                    page.fill("input[name=password]", DEMO_PASSWORD)
                    page.click("button[type=submit]")
                    page.wait_for_url(lambda url: "/login" not in url)
                    page.goto(base + screen.path.format(permit=permit_id))
                    page.wait_for_load_state("networkidle")
                    out = HERE / f"{screen.name}-{width}x{height}.png"
                    page.screenshot(path=str(out))
                    print(out.relative_to(HERE.parents[1]))
                    context.close()
            browser.close()
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
