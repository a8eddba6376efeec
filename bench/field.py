"""What an inspection costs the hand: the demo driven in a real headless Chromium as a tablet (1024×768, touch).

A robot does what a person does on the tablet, and counts it:
- a tap: every touch of a button, a choice, a check box, a link, a summary that opens, the camera's button and
  its shutter (two), a stroke of a finger on a drawing, and a list box (two: open it, pick);
- a typed field: every field the person types into (focusing it is part of typing it, not a tap);
- scrolling: the distance the page moves for the person to reach the next thing they touch (the robot scrolls
  only when it is out of sight, so that it sits in the middle of the screen; a page the app opens or scrolls
  itself costs nothing).
It uses what the page offers: a section's "All compliant" (`[data-all-compliant]`) where there is one, each
answer's Yes otherwise; a row added in place where the page adds one, *Save draft* first where it does not.

Scenarios, on the demo's permit SWP-2026-014 (Longmeadow), as its engineer, starting on the permit's page:
- typical: an erosion-control inspection with one control added that is found not installed (its note, its
  repair and corrective action), one discharge point added and answered, one finding with a corrective action,
  one photo marked up, the evaluation "violations" with its steps, a signature, submitted;
- all compliant: the same inspection with everything in order: every item Yes, the signature, submitted.
Each ends when the report's page says Submitted; a report the server refuses is a failure of the bench.
- lifting: the demo's agent for Longmeadow, on the page of a stop-work order that cites two violations of
  SWP-2026-021, each with its corrective action open (made first, not counted: the engineer's report with the
  two findings, their actions and a photo of the site, and the order issued by the agent through the app's
  service), verifies both actions with the photo that shows the work, approves the work, says why and lifts
  the order. It ends when the order's page says Lifted.

Prints `name=value` lines:
  field_typical_taps            taps (target <= 30)
  field_typical_typed_fields    typed fields (target <= 8)
  field_typical_scroll_px       scrolling, CSS px (target <= 8000)
  field_typical_seconds         the robot's wall time for it (a floor: a person reads and thinks)
  field_all_compliant_taps      taps of the all-compliant inspection (target <= 12)
  field_all_compliant_scroll_px its scrolling
  field_report_height_px        height of the new erosion-control report as it opens
  agent_lift_taps               taps to lift the order (target <= 8)
  agent_lift_typed_fields       typed fields to lift it

Run from the repository root: python -m bench.field
"""
from __future__ import annotations

import io
import logging
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PIL import Image  # noqa: E402
from playwright.sync_api import expect, sync_playwright  # noqa: E402
from sqlalchemy import select  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402

from inspect_app import create_app  # noqa: E402
from inspect_app.accounts.models import User  # noqa: E402
from inspect_app.demo import DEMO_PASSWORD, load_demo  # noqa: E402
from inspect_app.enforcement import services as enforcement  # noqa: E402
from inspect_app.enforcement.services import open_findings as permit_findings  # noqa: E402
from inspect_app.extensions import db  # noqa: E402
from inspect_app.permits.models import Permit  # noqa: E402

CHROMIUM = next((p for p in ("/usr/lib/chromium/chromium", "/usr/bin/chromium") if Path(p).exists()), None)
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
INSPECTOR = "engineer@example.org"
AGENT = "agent@longmeadow.example.org"
PERMIT = "SWP-2026-014"
ORDER_PERMIT = "SWP-2026-021"  # another permit of the engineer's: the order stops its work
ALL_COMPLIANT = "[data-all-compliant]"
# Swipe an element into sight when some of it is out of it (to the middle of the screen); answers the distance.
SCROLL_TO = """el => { const r = el.getBoundingClientRect(), before = window.scrollY;
    if (r.top < 0 || r.bottom > window.innerHeight) el.scrollIntoView({block: "center"});
    return Math.abs(window.scrollY - before); }"""


class Hand:
    """A person's hand on the tablet: what it touches, types and scrolls, counted."""

    def __init__(self, page) -> None:
        self.page, self.taps, self.typed, self.scrolled = page, 0, 0, 0.0

    def reach(self, target) -> None:
        """Bring `target` into sight as a person swipes: only when some of it is out of sight, to the middle. A
        target inside a folded part (a closed <details>) costs the tap that opens the fold first."""
        target.wait_for(state="attached")
        while True:
            fold = target.evaluate_handle("""el => { let shut = null;
                for (let d = el.closest('details'); d; d = d.parentElement.closest('details'))
                    if (!d.open && !(el.tagName === 'SUMMARY' && el.parentElement === d)) shut = d;
                return shut && shut.querySelector(':scope > summary'); }""").as_element()
            if fold is None:
                break
            self.scrolled += fold.evaluate(SCROLL_TO)
            fold.tap()
            self.taps += 1
        target.wait_for(state="visible")
        self.scrolled += target.evaluate(SCROLL_TO)

    def tap(self, target, times: int = 1) -> None:
        self.reach(target)
        target.tap()
        self.taps += times

    def go(self, target) -> None:
        """A tap that opens another page (a link, a form's button): counted, then waited for until the page is
        there, whether the browser loads it or htmx swaps it in (boosted links and forms)."""
        self.page.evaluate("""() => { window.benchSettled = false;
            document.addEventListener('htmx:afterSettle', () => { window.benchSettled = true; }, {once: true}); }""")
        self.tap(target)
        self.page.wait_for_function("() => window.benchSettled !== false")
        self.page.wait_for_load_state("domcontentloaded")

    def type(self, target, text: str) -> None:
        self.reach(target)
        target.fill(text)
        self.typed += 1

    def choose(self, target, label: str) -> None:
        """A list box: open it, pick."""
        self.reach(target)
        target.select_option(label=label)
        self.taps += 2

    def stroke(self, canvas) -> None:
        """One stroke of the finger across a drawing surface."""
        self.reach(canvas)
        box = canvas.bounding_box()
        mouse = self.page.mouse
        mouse.move(box["x"] + 20, box["y"] + box["height"] * 0.7)
        mouse.down()
        mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.2, steps=6)
        mouse.move(box["x"] + box["width"] * 0.8, box["y"] + box["height"] * 0.8, steps=6)
        mouse.up()
        self.taps += 1

    def photo(self, file_input, name: str) -> None:
        """The camera: its button, then the shutter."""
        self.reach(file_input.locator("xpath=..") if not file_input.is_visible() else file_input)
        file_input.set_input_files([{"name": name, "mimeType": "image/jpeg", "buffer": jpeg()}])
        self.taps += 2


def jpeg() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1600, 1200), (120, 140, 90)).save(out, "JPEG", quality=85)
    return out.getvalue()


def sign_in(context, url: str, email: str):
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.on("pageerror", lambda error: print(f"page error: {error}", file=sys.stderr))
    page.goto(f"{url}/login")
    page.fill("input[name=email]", email)
    page.fill("input[name=password]", DEMO_PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(lambda u: "/login" not in u)
    return page


def setup() -> tuple[object, str]:
    root = Path(tempfile.mkdtemp())
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{root / 'field.sqlite3'}",
                      "BLOB_ROOT": str(root / "blobs"), "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000",
                      "WEATHER_ENDPOINT": "http://127.0.0.1:9", "MAP_TILE_URL": ""})
    with app.app_context():
        db.create_all()
        load_demo()
        db.session.commit()
        permit_id = db.session.scalar(select(Permit.id).where(Permit.number == PERMIT))
    return app, permit_id


def unanswered_groups(page) -> list[str]:
    """The names of the checklist's answers not given yet (radio groups named answer-…)."""
    return page.evaluate("""() => { const names = new Set(), given = new Set();
        for (const r of document.querySelectorAll('input[type=radio][name^="answer-"]')) {
            names.add(r.name); if (r.checked) given.add(r.name); }
        return [...names].filter(n => !given.has(n)); }""")


# Whether the section of an "All compliant" button still has an answer not given.
UNANSWERED_IN_SECTION = """button => { const section = button.closest('section, details, fieldset') || document;
    const names = new Set([...section.querySelectorAll('input[type=radio][name^="answer-"]')].map(r => r.name));
    return [...names].some(n => !section.querySelector(`input[name="${n}"]:checked`)); }"""


def answer_the_rest(hand: Hand) -> None:
    """Every answer not given yet is Yes: one tap per section where the page offers it, one per answer if not."""
    page = hand.page
    for button in page.locator(ALL_COMPLIANT).all():
        if button.evaluate(UNANSWERED_IN_SECTION):
            hand.tap(button)
    for name in unanswered_groups(page):
        hand.tap(page.locator(f'label[for="{name}-yes"]'))


def sign_and_submit(hand: Hand) -> None:
    page = hand.page
    observe_weather(hand)
    hand.stroke(page.locator("#signature-canvas"))
    hand.go(page.locator("#submit-report"))
    status = page.locator("#report-status")
    if status.count() == 0 or status.inner_text().strip() != "Submitted":
        summary = page.locator("#error-summary")
        raise SystemExit("the report was refused: " + (summary.inner_text() if summary.count() else page.url))


def start(hand: Hand, url: str, permit_id: str) -> None:
    page = hand.page
    page.goto(f"{url}/permits/{permit_id}")
    hand.go(page.locator("[data-start=erosion_control]").first)
    page.wait_for_selector("#report-form", state="attached")
    observe_weather(hand)  # at the top of the form, as the inspector looks at the sky


def observe_weather(hand: Hand) -> None:
    """(e) While the station has not reported, the inspector writes down the weather seen on site."""
    observed = hand.page.locator("#observed_weather")
    if observed.count() and not observed.input_value():
        hand.type(observed, "Overcast, light rain, about 45 °F, light wind")


def save_draft(hand: Hand) -> None:
    page = hand.page
    hand.go(page.locator("#save-draft"))
    page.wait_for_selector("#report-form", state="attached")


def add_control(hand: Hand) -> None:
    """A control not on the plan, found not installed: its name, No, the note, the repair and its action."""
    page = hand.page
    hand.tap(page.locator("#add-control"))
    row = page.locator("[data-list-of=control-template] [data-part]").last
    hand.type(row.locator("input[name^=control-new-]"), "Silt fence SF-4 along the east swale")
    answer = row.locator('input[type=radio][name^="answer-control_installed-"]').first.get_attribute("name")
    hand.tap(row.locator(f'label[for="{answer}-no"]'))
    for other in sorted({r.get_attribute("name") for r in row.locator('input[type=radio][name^="answer-"]').all()}
                        - {answer}):  # its other items, in order: maintained, effective
        hand.tap(row.locator(f'label[for="{other}-yes"]'))
    note = row.locator('input[name^="note-control_installed-"]')
    hand.type(note, "Fence down over 30 ft at the swale")
    fix = row.locator('details.fix[id^="fix-control_installed-"]')
    if fix.get_attribute("open") is None:
        hand.tap(fix.locator("summary"))
    hand.type(fix.locator("textarea[name$=-repair]"), "Re-trench and re-stake the fence")
    first_seen = fix.locator("input[name$=-first_observed]")
    if not first_seen.input_value():
        hand.type(first_seen, time.strftime("%Y-%m-%d"))
    hand.choose(fix.locator("select[name$=-kind]"), "Repair or replace a control (within 7 days)") \
        if _has_option(fix.locator("select[name$=-kind]"), "Repair or replace a control (within 7 days)") \
        else hand.choose(fix.locator("select[name$=-kind]"), _first_option(fix.locator("select[name$=-kind]")))
    owner = fix.locator("input[name$=-owner_name]")
    if not owner.input_value():
        hand.type(owner, "Site contractor")


def _options(select_box) -> list[str]:
    return select_box.evaluate("s => [...s.options].filter(o => o.value).map(o => o.textContent.trim())")


def _has_option(select_box, label: str) -> bool:
    return label in _options(select_box)


def _first_option(select_box) -> str:
    return _options(select_box)[0]


def add_discharge_point(hand: Hand) -> None:
    """A point of discharge not on the plan, with what it did now and since the last inspection."""
    page = hand.page
    add = page.locator("#add-discharge-point")
    if add.count():
        hand.tap(add)
        row = page.locator("[data-list-of=discharge-template] [data-part]").last
        hand.type(row.locator("input[name^=discharge-new-]"), "Outlet to the brook at the east swale")
    else:
        hand.type(page.locator("#discharge_points"), "Outlet to the brook at the east swale")
        save_draft(hand)
        row = page.locator("#discharges fieldset.card").last
    for part in ("now", "since_last"):
        name = row.locator(f'input[type=radio][name$="-{part}"]').first.get_attribute("name")
        hand.tap(row.locator(f'label[for="{name}-no"]'))


def add_finding(hand: Hand, what: str = "Sediment tracked onto Bliss Road at the entrance",
                fix: str = "Sweep the road and add stone to the entrance") -> None:
    """A finding, a violation, with a corrective action and who does it."""
    page = hand.page
    hand.tap(page.locator("#add-new-finding"))
    row = page.locator("[data-list-of=finding-template] [data-part]").last
    hand.type(row.locator("textarea[name$=-description]").first, what)
    violation = row.locator("input[type=checkbox][name$=-is_violation]")
    if not violation.is_checked():
        hand.tap(violation)
    kind = row.locator("select[name$=-kind]")
    hand.choose(kind, _first_option(kind))
    hand.type(row.locator("textarea[name$=-description]").nth(1), fix)
    owner, chosen = row.locator("input[name$=-owner_name]"), row.locator("select[name$=-owner_id]")
    if owner.count() and not owner.input_value() and not (chosen.count() and chosen.input_value()):
        hand.type(owner, "Site contractor")


def photo_with_markup(hand: Hand, url: str, permit_id: str) -> None:
    """One photo of the site, marked up with an arrow, and back to the report."""
    page = hand.page
    hand.photo(page.locator("#photos"), "entrance.jpg")
    markup = page.locator("[data-markup]")
    if markup.count():  # marked up in place, in a dialog over the report
        hand.tap(markup.first)
        page.wait_for_function("() => document.querySelector('#photo-markup-dialog img').naturalWidth > 0")
        hand.stroke(page.locator("#photo-markup-canvas"))
        hand.tap(page.locator("[data-markup-done]"))
        return
    # No markup on the report: save the draft (the photo goes with it), then Permit → Photos → See all → Mark up,
    # draw, save, and back through the permit page to the draft.
    save_draft(hand)
    report_url = page.url.split("#")[0]
    hand.go(page.locator(".page-head a", has_text="Permit"))
    hand.go(page.locator("a", has_text="See all photos"))
    hand.go(page.locator("a", has_text="Mark up").first)
    page.wait_for_selector("#markup-canvas")
    hand.stroke(page.locator("#markup-canvas"))
    hand.go(page.locator("#markup-form button[type=submit]"))
    hand.go(page.locator("a", has_text="All photos of the permit"))
    hand.go(page.locator(f'a[href$="/permits/{permit_id}"]').first)
    hand.go(page.locator(f'a[href="{report_url.removeprefix(url)}"]').first)
    page.wait_for_selector("#report-form", state="attached")


def typical(hand: Hand, url: str, permit_id: str) -> None:
    # Down the page, as a person works through it: the controls, the discharges, the checklist, the findings and
    # photos, the evaluation and the signature.
    start(hand, url, permit_id)
    add_control(hand)
    add_discharge_point(hand)
    answer_the_rest(hand)
    photo_with_markup(hand, url, permit_id)
    add_finding(hand)
    page = hand.page
    hand.tap(page.locator('label[for="evaluation-violations"]'))
    hand.type(page.locator("#corrective_steps"), "Repair the fence and clean the entrance within 7 days")
    sign_and_submit(hand)


def all_compliant(hand: Hand, url: str, permit_id: str) -> None:
    start(hand, url, permit_id)
    answer_the_rest(hand)
    page = hand.page
    discharges = page.locator('#discharges input[type=radio][name^="discharge-"]')
    for name in sorted({discharges.nth(i).get_attribute("name") for i in range(discharges.count())}):
        hand.tap(page.locator(f'label[for="{name}-no"]'))
    hand.tap(page.locator('label[for="evaluation-compliant"]'))
    sign_and_submit(hand)


def order_with_two_actions(inspector: Hand, app, url: str) -> str:
    """Not counted: the engineer submits a report on ORDER_PERMIT with two violations, each with its corrective
    action, and a photo of the site; the agent issues a stop-work order citing both. The order page's address."""
    with app.app_context():
        permit = db.session.scalar(select(Permit).where(Permit.number == ORDER_PERMIT))
        permit_id = permit.id
    start(inspector, url, permit_id)
    page = inspector.page
    for what, fix in (("Silt fence down along the brook", "Re-trench and re-stake the silt fence"),
                      ("Sediment tracked onto Longmeadow Street", "Sweep the street and add stone to the entrance")):
        add_finding(inspector, what, fix)
    inspector.photo(page.locator("#photos"), "site.jpg")
    answer_the_rest(inspector)
    inspector.tap(page.locator('label[for="evaluation-violations"]'))
    inspector.type(page.locator("#corrective_steps"), "Reset the silt fence and clean the street")
    sign_and_submit(inspector)
    with app.app_context():
        permit = db.session.get(Permit, permit_id)
        agent = db.session.scalar(select(User).where(User.email == AGENT))
        violations = [f for f in permit_findings(permit) if f.is_violation]
        order = enforcement.issue_stop_work(agent, permit, "Violations found at the inspection", violations)
        db.session.commit()
        return f"{url}/permits/{permit_id}/stop-work/{order.id}"


def lift(hand: Hand, order_url: str) -> None:
    """Counted: each open action verified with its photo, the work approved, the reason, Lift."""
    page = hand.page
    page.goto(order_url)
    for action in page.locator("#verified .lift-action").all():
        hand.tap(action.locator("label.check"))
        photo = action.locator(".thumb-choice label.thumb")
        if photo.count():
            hand.tap(photo.first)
    hand.type(page.locator("textarea[name=reason]"), "Both corrected and verified on site")
    hand.tap(page.locator("label[for=approves_work]"))
    hand.go(page.locator("form[action$='/lift'] button[type=submit]"))
    if "Lifted" not in page.locator("h1").inner_text():
        summary = page.locator(".field-error")
        raise SystemExit("the order was not lifted: " + (summary.first.inner_text() if summary.count() else page.url))


def main() -> None:
    app, permit_id = setup()
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}"
    figures = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True,
                                          is_mobile=False, timezone_id="America/New_York")
            page = sign_in(context, url, INSPECTOR)

            hand = Hand(page)
            began = time.monotonic()
            typical(hand, url, permit_id)
            figures.update(field_typical_taps=hand.taps, field_typical_typed_fields=hand.typed,
                           field_typical_scroll_px=round(hand.scrolled),
                           field_typical_seconds=f"{time.monotonic() - began:.1f}")

            hand = Hand(page)
            all_compliant(hand, url, permit_id)
            figures.update(field_all_compliant_taps=hand.taps, field_all_compliant_scroll_px=round(hand.scrolled))

            page.goto(f"{url}/permits/{permit_id}/inspections/new/erosion_control")
            expect(page.locator("#report-form")).to_be_attached()
            figures["field_report_height_px"] = page.evaluate("document.documentElement.scrollHeight")

            order_url = order_with_two_actions(Hand(page), app, url)
            agent = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True,
                                        timezone_id="America/New_York")
            hand = Hand(sign_in(agent, url, AGENT))
            lift(hand, order_url)
            figures.update(agent_lift_taps=hand.taps, agent_lift_typed_fields=hand.typed)
            browser.close()
    finally:
        server.shutdown()
    for name, value in figures.items():
        print(f"{name}={value}")


if __name__ == "__main__":
    main()
