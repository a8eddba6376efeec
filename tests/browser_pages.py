"""The one builder of a signed-in browser page: the real login form, and (for offline tests) the wait
until the service worker controls the page."""
from __future__ import annotations

from factories import PASSWORD


def signed_in_page(page, base_url: str, user, password: str = PASSWORD, controlled: bool = False):
    """Log `page` in as `user` through the login form at `base_url`; with `controlled`, also wait until
    the service worker controls it (offline work needs that)."""
    page.goto(f"{base_url}/login")
    page.fill("input[name=email]", user.email)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login" not in url)
    if controlled:  # installing caches the app shell first: seconds on a loaded machine
        page.wait_for_function("() => !!navigator.serviceWorker.controller", timeout=60_000)
    return page
