"""Helpers for the offline browser tests: real JPEGs, a service-worker-controlled page, the server's report
form filled like an inspector would (offline too), the outbox read from the page, and a wire-level fault
injector (a WSGI middleware that drops connections the way a lost network does)."""
from __future__ import annotations

import hashlib
import re
import socket
import threading

from playwright.sync_api import expect

from browser_pages import signed_in_page
from factories import PASSWORD
from tests.builders import jpeg  # noqa: F401  (the photos these tests upload)
from tests.inspections.report_helpers import OBSERVED_WEATHER


# Long enough for a loaded two-core machine (a report's photos uploaded in 1 MiB chunks, then rendered); a
# wait that succeeds returns as soon as it does.
PATIENCE_S = 60


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def photo_file(name: str, data: bytes) -> dict:
    return {"name": name, "mimeType": "image/jpeg", "buffer": data}


def sign_in_controlled(page, server, user, password: str = PASSWORD) -> None:
    """Log in through the form and wait until the service worker controls the page."""
    signed_in_page(page, server.url, user, password, controlled=True)


def hold_permits(page, server) -> None:
    """Tap "Make my permits available offline" and wait until it is done."""
    page.goto(f"{server.url}/offline/")
    page.click("#hold-all")
    page.wait_for_selector("#held-status:has-text('Done')", timeout=PATIENCE_S * 1000)  # a dozen pages a permit


def new_report_url(server, permit, kind: str = "erosion_control") -> str:
    """The new report form of a permit and type (held on the device by "available offline")."""
    return f"{server.url}/permits/{permit.id}/inspections/new/{kind}"


def wait_for_form(page) -> None:
    """Until the report form is ready: the device has made its id and filled in the time."""
    expect(page.locator("#report-form")).to_have_attribute("action", re.compile(r"/inspections/[0-9a-f-]{36}$"))
    expect(page.locator("input[data-fresh-key]")).not_to_have_value("")


def device_id(page) -> str:
    """The id the device made for the report on the page."""
    return page.get_attribute("#report-form", "action").rsplit("/", 1)[-1]


def draw_signature(page) -> None:
    pad = page.locator("#signature-canvas")
    pad.scroll_into_view_if_needed()
    box = pad.bounding_box()
    page.mouse.move(box["x"] + 30, box["y"] + 100)
    page.mouse.down()
    for x, y in ((90, 40), (150, 110), (220, 30), (300, 100)):
        page.mouse.move(box["x"] + x, box["y"] + y, steps=4)
    page.mouse.up()


def observe_weather(page) -> None:
    """(e) With no server (or no station yet) the station's weather is pending: the inspector writes down the
    weather seen on site, which a report signed while it is pending needs."""
    page.fill("#observed_weather", OBSERVED_WEATHER)


def answer_checklist(page, answer: str = "yes") -> None:
    page.evaluate("""answer => document.querySelectorAll('#checklist input[type=radio][value=' + answer + ']')
        .forEach(radio => { radio.checked = true; radio.dispatchEvent(new Event('change', {bubbles: true})); })""", answer)


def add_finding(page, description: str, violation: bool = True, action: str | None = None) -> str:
    """Add a finding (and its corrective action) as a part of the report form; returns the part's field prefix."""
    parts = page.locator("[data-list-of=finding-template] [data-part]")
    count = parts.count()
    page.click("#add-new-finding")
    expect(parts).to_have_count(count + 1)
    part = parts.last
    prefix = part.locator("textarea[name^=finding-new-]").get_attribute("name").removesuffix("-description")
    part.locator(f"[name={prefix}-description]").fill(description)
    part.locator(f"[name={prefix}-location]").fill("East line")
    if violation:
        part.locator(f"[name={prefix}-is_violation]").check()
    if action:
        action_prefix = prefix.replace("finding-new-", "action-new-")
        part.locator(f"[name={action_prefix}-kind]").select_option("routine_maintenance")
        part.locator(f"[name={action_prefix}-description]").fill(action)
        part.locator(f"[name={action_prefix}-owner_name]").fill("Site contractor")
    return prefix


def add_photos(page, selector: str, files: list[dict]) -> None:
    page.set_input_files(selector, files)


def submit(page) -> None:
    page.click("#submit-report")
    page.wait_for_selector("#offline-message:has-text('Saved on this device — will sync')")


def fill_erosion_report(page, photos: list[bytes], evaluation: str = "violations") -> str:
    """Fill the report in (`fill_erosion_form`) and submit it with no server; the id the device made for it."""
    made = fill_erosion_form(page, photos, evaluation)
    submit(page)
    return made


def fill_erosion_form(page, photos: list[bytes], evaluation: str = "violations") -> str:
    """Answer the checklist, add a violation finding with a corrective action, the photos (the first on
    the inspection, the rest on the finding), the evaluation, and the signature. Returns the id the device
    made for the report."""
    wait_for_form(page)
    answer_checklist(page)
    finding = add_finding(page, "Silt fence down at the east line", action="Reset and re-trench the silt fence")
    if photos:
        add_photos(page, "#photos", [photo_file("site.jpg", photos[0])])
    if len(photos) > 1:
        add_photos(page, f"[name={finding}-photos]",
                   [photo_file(f"finding-{i}.jpg", data) for i, data in enumerate(photos[1:])])
    page.check(f"#evaluation-{evaluation}")
    if evaluation == "violations":
        page.fill("#corrective_steps", "Reset the silt fence by tomorrow evening.")
    observe_weather(page)
    draw_signature(page)
    return device_id(page)


def outbox(page) -> list[dict]:
    """The form posts waiting on the device, as the service worker kept them (IndexedDB)."""
    page.wait_for_function("() => typeof FormStore !== 'undefined'")  # the page's deferred scripts have run
    return page.evaluate("FormStore.all().then(posts => posts.map(p => ({id: p.id, url: p.url, state: p.state,"
                         " created_at: p.created_at})))")


def keep_post(page, url: str, fields: dict[str, str]) -> str:
    """A form post kept on the device as the service worker keeps one it could not send (with no `posted_by`
    in `fields`: one kept before posts named who filled them in); its id in the outbox."""
    page.wait_for_function("() => typeof FormStore !== 'undefined'")
    return page.evaluate("""async ({url, fields}) => {
      const id = crypto.randomUUID();
      await FormStore.put({ id, url, entries: Object.entries(fields), key: crypto.randomUUID(),
                            created_at: new Date().toISOString(), state: "waiting" });
      return id;
    }""", {"url": url, "fields": fields})


def drafts(page) -> list[dict]:
    """The unsaved typing this device keeps ({id: the form's data-draft, fields, parts}; static/app.js)."""
    page.wait_for_function("() => typeof DeviceStore !== 'undefined'")
    return page.evaluate("DeviceStore('drafts').all()")


def wait_until(page, condition, message: str, timeout_s: float = PATIENCE_S):
    """Poll `condition()` every 100 ms (with page.wait_for_timeout, so Playwright's events keep flowing) until
    it is truthy; its value."""
    for _ in range(int(timeout_s * 10)):
        value = condition()
        if value:
            return value
        page.wait_for_timeout(100)
    raise AssertionError(message)


def wait_for_outbox(page, predicate, timeout_s: float = PATIENCE_S) -> list[dict]:
    """Poll the outbox until `predicate(items)`; the items."""
    items = []

    def reached() -> bool:
        items[:] = outbox(page)
        return predicate(list(items))

    try:
        wait_until(page, reached, "", timeout_s)
    except AssertionError:
        raise AssertionError(f"the outbox never reached the expected state: {items!r}") from None
    return items


def wait_for_drafts(page, predicate) -> None:
    """Poll the kept typing (put on the device a moment after the last keystroke) until `predicate(drafts)`."""
    wait_until(page, lambda: predicate(drafts(page)), "the device's kept typing never reached the expected state")


class WireFaults:
    """A WSGI middleware in front of the app that sees every request as the server gets it.

    `drop_push_responses`: that many /sync/push answers are lost after the app applied the batch
    (the connection is cut instead of answering). `cut_blob_after`: blob chunks the app accepts
    before the next chunk is cut off mid-way (read, never given to the app). `blob_puts` records
    (sha, offset, bytes the app read) for every chunk given to the app: fewer than its length when the
    device broke the request off itself (a page left in the middle of an upload).
    """

    def __init__(self, app):
        self.app = app
        self.drop_push_responses = 0
        self.drop_form_answers = 0  # the same for form posts to /inspections/...
        self.form_posts = 0
        self.cut_blob_after: int | None = None
        self.blob_puts: list[tuple[str, int, int]] = []
        self.pushes = 0
        self.dropped = 0
        self._lock = threading.Lock()

    def __call__(self, environ, start_response):
        path, method = environ.get("PATH_INFO", ""), environ.get("REQUEST_METHOD")
        blob = re.fullmatch(r"/sync/blobs/([0-9a-f]{64})", path)
        if blob and method == "PUT":
            with self._lock:
                accepted = len(self.blob_puts)
                cut = self.cut_blob_after is not None and accepted >= self.cut_blob_after
                if cut:
                    self.cut_blob_after = None
            if cut:
                length = int(environ.get("CONTENT_LENGTH") or 0)
                environ["wsgi.input"].read(length // 2)  # half the chunk arrives, then the line drops
                return self._cut(environ, start_response)
            counted = environ["wsgi.input"] = _Counted(environ["wsgi.input"])
            try:
                return self.app(environ, start_response)  # the app reads the whole body before answering
            finally:
                self.blob_puts.append((blob.group(1), int(environ.get("HTTP_UPLOAD_OFFSET", -1)), counted.read_bytes))
        form_post = method == "POST" and path.startswith("/inspections/")
        self.form_posts += form_post
        if (path == "/sync/push" and method == "POST") or form_post:
            self.pushes += not form_post
            if (self.drop_push_responses and not form_post) or (self.drop_form_answers and form_post):
                if form_post:
                    self.drop_form_answers -= 1
                else:
                    self.drop_push_responses -= 1
                body = b"".join(self.app(environ, lambda *args, **kwargs: None))  # applied and committed
                assert body
                self.dropped += 1
                return self._cut(environ, start_response)
        return self.app(environ, start_response)

    @staticmethod
    def _cut(environ, start_response):
        start_response("200 OK", [])  # never reaches the device: the connection is reset first
        connection = environ["werkzeug.socket"]
        connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        connection.shutdown(socket.SHUT_RDWR)
        return []

    def assert_sent_once(self, sha: str, size: int) -> None:
        """The app read the blob's bytes once each, in order: every chunk began where the one before ended."""
        puts = [(offset, n) for s, offset, n in self.blob_puts if s == sha]
        starts = [0] + [offset + n for offset, n in puts[:-1]]
        assert [offset for offset, _ in puts] == starts and sum(n for _, n in puts) == size, puts


class _Counted:
    """A request body that counts the bytes read from it."""

    def __init__(self, stream) -> None:
        self.stream, self.read_bytes = stream, 0

    def read(self, *args) -> bytes:
        data = self.stream.read(*args)
        self.read_bytes += len(data)
        return data

    def readinto(self, buffer) -> int | None:
        n = self.stream.readinto(buffer)
        self.read_bytes += n or 0
        return n

    def readline(self, *args) -> bytes:
        data = self.stream.readline(*args)
        self.read_bytes += len(data)
        return data
