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
    if controlled:
        page.evaluate("navigator.serviceWorker.ready")
        for _ in range(50):
            if page.evaluate("!!navigator.serviceWorker.controller"):
                return page
            page.wait_for_timeout(100)
        raise AssertionError("the service worker never took control of the page")
    return page
