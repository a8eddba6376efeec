"""The app opens with no network: the service worker in a real Chromium, both kinds of offline, and a server
too slow to wait for."""
import threading

import pytest

from playwright.sync_api import expect

from browser_pages import signed_in_page
from tests.offline.offline_helpers import hold_permits

pytestmark = pytest.mark.browser


def _sign_in_and_get_controlled(page, server, user):
    signed_in_page(page, server.url, user, controlled=True)
    assert "/permits/" in page.url


def _permit_page_seen_online(make, server, page):
    """An inspector signed in (the service worker controlling the page) has opened their permit's page."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    _sign_in_and_get_controlled(page, server, inspector)
    page.goto(f"{server.url}/permits/{permit.id}")
    page.wait_for_selector(f"h1:has-text('{permit.number}')")
    return permit


def test_service_worker_is_served_from_the_root_uncached(client):
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "no-cache"
    assert "javascript" in response.headers["Content-Type"]


def test_manifest_makes_the_app_installable(client):
    with client.get("/static/manifest.webmanifest") as response:
        manifest = response.get_json(force=True)
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    assert {icon["sizes"] for icon in manifest["icons"]} >= {"192x192", "512x512"}


def test_pages_seen_online_open_with_the_browser_offline(make, server, page, context):
    permit = _permit_page_seen_online(make, server, page)

    context.set_offline(True)
    page.reload()
    assert permit.number in page.inner_text("h1")
    page.goto(f"{server.url}/permits/{permit.id}/never-seen")
    assert "You are offline and this page is not saved on this device" in page.inner_text("main")


def test_pages_seen_online_open_with_the_server_stopped(make, server, page):
    permit = _permit_page_seen_online(make, server, page)
    page.goto(f"{server.url}/permits/")

    server.stop()
    page.goto(f"{server.url}/permits/")
    assert permit.number in page.inner_text("main")
    page.goto(f"{server.url}/permits/{permit.id}")
    assert permit.number in page.inner_text("h1")
    # Styles come from the cache too: the page is usable, not bare HTML.
    assert page.evaluate("getComputedStyle(document.querySelector('header')).backgroundColor") != "rgba(0, 0, 0, 0)"

    server.start()
    page.goto(f"{server.url}/permits/{permit.id}")
    assert permit.number in page.inner_text("h1")


def test_a_server_slower_than_the_workers_timeout_counts_as_gone(make, server, page, app):
    """A page the server has not answered within the worker's timeout opens from the device (a server that
    hangs is gone to an inspector on site); the worker's own 4 s is shortened here to keep the test short."""
    permit = _permit_page_seen_online(make, server, page)
    app.config["OFFLINE_SERVER_TIMEOUT_MS"] = 1000
    page.evaluate("""async () => {  // the worker of these bytes installed, and in control of the page
        navigator.serviceWorker.addEventListener("controllerchange", () => { window.newWorker = true; });
        await (await navigator.serviceWorker.ready).update();
    }""")
    page.wait_for_function("() => window.newWorker === true")
    answer, served = threading.Event(), app.wsgi_app

    def slow(environ, start_response):
        if environ["PATH_INFO"] == f"/permits/{permit.id}":
            answer.wait(timeout=10)  # until the page has been shown without it
        return served(environ, start_response)

    app.wsgi_app = slow
    try:
        page.goto(f"{server.url}/permits/{permit.id}")
        expect(page.locator("[data-held-note]")).to_be_visible()  # "As known when held at ...": the device's copy
        assert permit.number in page.inner_text("h1")
    finally:
        answer.set()


def test_logging_out_forgets_the_pages_kept_on_the_device(make, server, page):
    """A shared tablet: once the inspector has logged out, the permit page no longer opens with no server, and
    the next person signed in is not shown the list of permits the first one held (their numbers and sites)."""
    permit = _permit_page_seen_online(make, server, page)
    hold_permits(page, server)
    assert permit.site_address in page.inner_text("#held-list")

    page.click("header button:has-text('Log out')")
    page.wait_for_selector("input[name=password]")
    server.stop()
    page.goto(f"{server.url}/permits/{permit.id}")
    assert "You are offline and this page is not saved on this device" in page.inner_text("main")
    assert permit.number not in page.inner_text("main")

    server.start()
    _sign_in_and_get_controlled(page, server, make.user("inspector"))
    page.goto(f"{server.url}/offline/")
    page.wait_for_selector("#held-list li.empty")  # the list is filled in from the device's store
    assert permit.site_address not in page.inner_text("main")


def test_a_form_posted_with_no_server_goes_only_to_a_page_of_the_app(make, server, page):
    """A form the worker cannot keep goes where its `offline_page` says (the permit page's "Start": the held new
    report), but never off the app: a form naming a page elsewhere (another site's, say) gets the offline page."""
    permit = _permit_page_seen_online(make, server, page)

    server.stop()
    page.evaluate("""([action, elsewhere]) => {
        const form = Object.assign(document.createElement("form"), {method: "post", action});
        form.append(Object.assign(document.createElement("input"), {type: "hidden", name: "offline_page", value: elsewhere}));
        document.body.append(form);
        form.submit();
    }""", [f"/permits/{permit.id}/inspections", "https://elsewhere.example/sign-in"])
    page.wait_for_url(f"{server.url}/offline")
    assert "You are offline and this page is not saved on this device" in page.inner_text("main")
