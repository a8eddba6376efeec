"""Offline figures in a real headless Chromium against a live app on 127.0.0.1 (SQLite).

Prints `name=value` lines:
- submit_to_saved_median_ms: tap on *Sign and submit* on the report form held for a new inspection
  (browser offline, three photos and a finding on the report) until the page "Saved on this device —
  will sync" has its message in the document: the click's time (kept in sessionStorage) to the saved
  page's DOMContentLoaded, the service worker having kept the post (files included) in IndexedDB and
  answered with the saved page from its cache; median of SUBMITS (target <= 100)
- shell_first_load_gzip_bytes: the app shell a first visit transfers (the login page and every
  resource it loads, plus what the service worker caches at install), each body compressed with gzip
  level 6 as a compressing front server sends it (the dev server sends identity); the resources are
  those Chromium requested (Playwright's context request events) and the worker's SHELL list
  (target <= 150 KB = 153600)
- shell_first_load_raw_bytes: the same bodies uncompressed
- offline_reload_median_ms: reload of a held permit page with the browser offline, from navigation
  start to the load event (Navigation Timing); median of RELOADS (target <= 300)
- server_down_reload_median_ms: the same with the server process stopped
- permit_page_first_screen_bytes: the permit page's HTML (as its inspector gets it) before its first
  section break, the first folded part (`<details class="fold"`): the header, *What to do now* and what
  the page puts before the folds (uncompressed bytes)
"""
from __future__ import annotations

import datetime as dt
import gzip
import io
import logging
import os
import re
import statistics
import sys
import tempfile
import threading
from decimal import Decimal
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from inspect_app import create_app  # noqa: E402
from inspect_app.accounts.services import create_user  # noqa: E402
from inspect_app.extensions import db  # noqa: E402
from inspect_app.permits import services as permits  # noqa: E402

SUBMITS = 15
RELOADS = 10
PASSWORD = "bench-password"
CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if Path(p).exists()), None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# Where the permit page's first screen ends: its first folded part (templates/permits/detail.html).
FIRST_SECTION_BREAK = '<details class="fold"'
# The tap on *Sign and submit*, timed from the click (kept across the navigation in sessionStorage).
CLICK = """() => { sessionStorage.clickedAt = String(performance.timeOrigin + performance.now());
                 document.getElementById('submit-report').click(); }"""
# ...until the saved page's message is in the document (its DOMContentLoaded).
SAVED_AFTER = """() => performance.timeOrigin + performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd
                 - Number(sessionStorage.clickedAt)"""


def browser_cpu_ms() -> float:
    """CPU time (user + system, ms) of the Chromium processes this bench started, from /proc."""
    parents, ticks, names = {}, {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # gone meanwhile
            continue
        pid = int(stat.parent.name)
        name, fields = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
        parents[pid], ticks[pid], names[pid] = int(fields[1]), int(fields[11]) + int(fields[12]), name
    def ours(pid: int) -> bool:
        while pid > 1:
            if pid == os.getpid():
                return True
            pid = parents.get(pid, 0)
        return False
    total = sum(t for pid, t in ticks.items() if names[pid].startswith("chrom") and ours(pid))
    return total * 1000 / os.sysconf("SC_CLK_TCK")


def jpeg(seed: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1024, 768), (seed * 40 % 256, 120, 200)).save(out, "JPEG", quality=85)
    return out.getvalue()


class Server:
    """The app on 127.0.0.1, stoppable and restartable on the same port (the same origin)."""

    def __init__(self, app) -> None:
        self.app, self.port, self.server = app, 0, None

    def start(self) -> None:
        self.server = make_server("127.0.0.1", self.port, self.app, threaded=True)
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def setup() -> tuple[object, str]:
    root = Path(tempfile.mkdtemp())
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{root / 'bench.sqlite3'}",
                      "BLOB_ROOT": str(root / "blobs"), "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
                      "WEATHER_ENDPOINT": "http://127.0.0.1:9", "MAP_TILE_URL": ""})
    with app.app_context():
        db.create_all()
        inspector = create_user("bench@example.org", "Bench Inspector", "inspector", PASSWORD)
        jurisdiction = permits.ensure_jurisdictions()[0]
        permit = permits.create_permit(
            None, jurisdiction_id=jurisdiction.id, number="BENCH-1", site_address="1 Main Street",
            latitude=42.05, longitude=-72.58, owner_name="Owner", applicant_name="Applicant",
            disturbed_acres=Decimal("5"), cgp_schedule="every_7_days", issued_on=dt.date(2026, 1, 5))
        permits.assign(None, permit, inspector, "design_engineer")
        area = permits.add_area(None, permit, "Lot 1", Decimal("0.5"))
        structure = permits.add_structure(None, permit, name="Silt fence", kind="bmp", is_underground=False)
        # The site map on the permit page draws these (Leaflet, from the app shell; no tiles offline).
        permits.place(None, area, 42.0503, -72.5795)
        permits.place(None, structure, 42.0497, -72.5806)
        db.session.commit()
        return app, permit.id


def shell_bytes(app, paths: set[str]) -> tuple[int, int]:
    """Raw and gzip-6 bytes of each path's body, as the app serves it."""
    raw = packed = 0
    client = app.test_client()
    for path in sorted(paths):
        with client.get(path) as response:
            body = response.get_data()
        raw += len(body)
        packed += len(gzip.compress(body, compresslevel=6))
    return raw, packed


def main() -> None:
    app, permit_id = setup()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = Server(app)
    server.start()
    sw = Path(app.static_folder, "sw.js").read_text()
    shell_list = set(re.findall(r'"(/[^"]*)"', sw.split("const SHELL = [")[1].split("];")[0]))

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context()
        requested: set[str] = set()
        context.on("request", lambda r: requested.add(urlsplit(r.url).path) if r.url.startswith(server.url) else None)
        page = context.new_page()
        page.goto(f"{server.url}/login")
        page.evaluate("navigator.serviceWorker.ready")
        page.wait_for_timeout(300)
        shell = (requested | shell_list | {"/sw.js"}) - {"/favicon.ico"}
        raw, packed = shell_bytes(app, shell)

        page.fill("input[name=email]", "bench@example.org")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(lambda url: "/login" not in url)
        page.goto(f"{server.url}/offline/")
        page.click("#hold-all")
        page.wait_for_selector("#held-status:has-text('Done')")

        permit_url = f"{server.url}/permits/{permit_id}"
        permit_html = page.evaluate("url => fetch(url).then(r => r.text())", permit_url)
        first_screen = len(permit_html.split(FIRST_SECTION_BREAK, 1)[0].encode())

        context.set_offline(True)
        form_url = f"{server.url}/permits/{permit_id}/inspections/new/erosion_control"
        photos = [{"name": f"p{i}.jpg", "mimeType": "image/jpeg", "buffer": jpeg(i)} for i in range(3)]
        saves, cpu = [], []
        for _ in range(SUBMITS):
            page.goto(form_url)
            expect(page.locator("input[data-fresh-key]")).not_to_have_value("")  # the device made its ids
            page.click("#add-new-finding")
            finding = page.locator("[data-list-of=finding-template] [data-part]").last
            finding.locator("textarea[name$=-description]").first.fill("Silt fence down")
            finding.locator("input[name$=-is_violation]").check()
            page.set_input_files("#photos", photos)
            page.check("#evaluation-violations")
            page.fill("#corrective_steps", "Reset it")
            page.locator("#signature-canvas").scroll_into_view_if_needed()
            box = page.locator("#signature-canvas").bounding_box()
            page.mouse.move(box["x"] + 20, box["y"] + 60)
            page.mouse.down()
            page.mouse.move(box["x"] + 200, box["y"] + 20, steps=6)
            page.mouse.move(box["x"] + 300, box["y"] + 90, steps=6)
            page.mouse.up()
            before = browser_cpu_ms()
            page.evaluate(CLICK)
            # Waiting on the URL, not on a selector: a selector wait makes Playwright compile its own script
            # in the new page while it loads, on the page's main thread, ahead of the page's own scripts
            # (a Chromium trace shows it there, 20-80 ms), which no user's browser does.
            page.wait_for_url(f"{server.url}/offline/saved", wait_until="domcontentloaded")
            cpu.append(browser_cpu_ms() - before)
            expect(page.locator("#offline-message")).to_have_text("Saved on this device — will sync")
            saves.append(page.evaluate(SAVED_AFTER))

        offline_reloads = reloads(page, permit_url)
        context.set_offline(False)
        server.stop()
        down_reloads = reloads(page, permit_url)
        browser.close()

    print(f"submits={SUBMITS}")
    print(f"submit_to_saved_median_ms={statistics.median(saves):.1f}")
    print(f"submit_to_saved_max_ms={max(saves):.1f}")
    print(f"submit_to_saved_cpu_median_ms={statistics.median(cpu):.1f}")
    print(f"shell_first_load_files={len(shell)}")
    print(f"shell_first_load_raw_bytes={raw}")
    print(f"shell_first_load_gzip_bytes={packed}")
    print(f"offline_reload_median_ms={statistics.median(offline_reloads):.1f}")
    print(f"server_down_reload_median_ms={statistics.median(down_reloads):.1f}")
    print(f"permit_page_first_screen_bytes={first_screen}")


def reloads(page, url: str) -> list[float]:
    """Milliseconds from navigation start to the load event, for RELOADS reloads of `url`."""
    page.goto(url)
    times = []
    for _ in range(RELOADS):
        page.reload(wait_until="load")
        times.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
    return times


if __name__ == "__main__":
    main()
