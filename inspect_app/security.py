"""Headers on every response, cookies that say Secure when the request came over TLS, and sign-ins that
end when idle.

The Content-Security-Policy allows only the app's own scripts, styles, workers and connections (no
inline script anywhere: the templates have none, nor on* handlers); images may also be blob: (photos
waiting in the outbox), data: (a drawn signature) and the map tiles of the configured tile server
(MAP_TILE_URL). Nothing may frame the app.

No answer of the app is stored by the browser's cache or a proxy (`Cache-Control: no-store`): a signed-in page
or JSON could otherwise be shown again after signing out, or to the next person at a shared tablet. Files keep
the caching they were served with (static files: no-cache; photos: private). The service worker holds pages
for work offline in its own cache, which it fills itself whatever the header says (static/sw.js).

A sign-in ends after SESSION_IDLE_TIMEOUT with no request (`SessionInterface`): the session keeps its CSRF
token and loses only who is signed in, so an expired sign-in is answered as any other signed-out request
(a redirect to /login, a 401 under /sync) and the outbox knows it must wait for a new sign-in.
"""
from __future__ import annotations

import time
from functools import lru_cache
from urllib.parse import urlsplit

from flask import Flask, current_app, request
from flask.sessions import SecureCookieSessionInterface

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob: data:{tiles}",
    "connect-src 'self'",
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])
HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


@lru_cache(maxsize=8)
def content_security_policy(tile_url: str | None) -> str:
    """The policy, with the tile server's origin allowed to serve images when one is configured."""
    parts = urlsplit(tile_url or "")
    origin = f" {parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""
    return CONTENT_SECURITY_POLICY.format(tiles=origin)


def secure_response(response):
    """Add the security headers; over TLS (directly or via a trusted proxy), mark every cookie Secure.

    The session cookie is set after this hook, by `SessionInterface`.
    """
    response.headers.setdefault("Content-Security-Policy", content_security_policy(current_app.config.get("MAP_TILE_URL")))
    for name, value in HEADERS.items():
        response.headers.setdefault(name, value)
    response.headers.setdefault("Cache-Control", "no-store")
    if request.is_secure:
        cookies = response.headers.getlist("Set-Cookie")
        if cookies:
            response.headers.remove("Set-Cookie")
            for cookie in cookies:
                secure = "; secure" in cookie.lower()
                response.headers.add("Set-Cookie", cookie if secure else f"{cookie}; Secure")
    return response


# Flask-Login's keys of who is signed in (what its logout_user removes); the remember-me choice stays.
SIGNED_IN_KEYS = ("_user_id", "_fresh", "_id")
# When the signed-in session last saw a request, in seconds since the epoch.
SEEN_KEY = "_seen"


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, its cookie Secure whenever the request came over TLS, its sign-in
    ended after SESSION_IDLE_TIMEOUT with no request.

    The time of the last request is inside the signed cookie, so a copied cookie ends as well. A
    remember-me cookie (the person's choice at sign-in) signs them in again, as Flask-Login does once a
    browser has dropped the session cookie.
    """

    def get_cookie_secure(self, app: Flask) -> bool:
        return super().get_cookie_secure(app) or request.is_secure

    def open_session(self, app: Flask, request):
        session = super().open_session(app, request)
        if session is not None and SIGNED_IN_KEYS[0] in session:
            seen = session.get(SEEN_KEY)
            if not isinstance(seen, (int, float)) or time.time() - seen > _idle_timeout_s(app):
                for key in (*SIGNED_IN_KEYS, SEEN_KEY):  # a sign-in that never said when it was seen, too
                    session.pop(key, None)
        return session

    def save_session(self, app: Flask, session, response) -> None:
        if SIGNED_IN_KEYS[0] in session:
            now, seen = round(time.time(), 3), session.get(SEEN_KEY)
            # Written again at most every minute (or half the timeout, if shorter), not with every answer.
            if not isinstance(seen, (int, float)) or now - seen >= min(60, _idle_timeout_s(app) / 2):
                session[SEEN_KEY] = now
        super().save_session(app, session, response)


def _idle_timeout_s(app: Flask) -> float:
    return app.config["SESSION_IDLE_TIMEOUT"].total_seconds()


def register(app: Flask) -> None:
    app.session_interface = SessionInterface()
    app.after_request(secure_response)
