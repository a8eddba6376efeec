"""Headers on every response, and cookies that say Secure when the request came over TLS.

The Content-Security-Policy allows only the app's own scripts, styles, workers and connections (no
inline script anywhere: the templates have none, nor on* handlers); images may also be blob: (photos
waiting in the outbox), data: (a drawn signature) and the map tiles of the configured tile server
(MAP_TILE_URL). Nothing may frame the app.
"""
from __future__ import annotations

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
    if request.is_secure:
        cookies = response.headers.getlist("Set-Cookie")
        if cookies:
            response.headers.remove("Set-Cookie")
            for cookie in cookies:
                secure = "; secure" in cookie.lower()
                response.headers.add("Set-Cookie", cookie if secure else f"{cookie}; Secure")
    return response


class SessionInterface(SecureCookieSessionInterface):
    """Flask's signed-cookie session, its cookie Secure whenever the request came over TLS."""

    def get_cookie_secure(self, app: Flask) -> bool:
        return super().get_cookie_secure(app) or request.is_secure


def register(app: Flask) -> None:
    app.session_interface = SessionInterface()
    app.after_request(secure_response)
