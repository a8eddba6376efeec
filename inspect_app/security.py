"""Headers on every response, and cookies that say Secure when the request came over TLS.

The Content-Security-Policy allows only the app's own scripts, styles, workers and connections (no
inline script anywhere: the templates have none, nor on* handlers); images may also be blob: (photos
waiting in the outbox) and data: (a drawn signature). Nothing may frame the app.
"""
from __future__ import annotations

from flask import Flask, request
from flask.sessions import SecureCookieSessionInterface

CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' blob: data:",
    "connect-src 'self'",
    "worker-src 'self'",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


def secure_response(response):
    """Add the security headers; over TLS (directly or via a trusted proxy), mark every cookie Secure.

    The session cookie is set after this hook, by `SessionInterface`.
    """
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
