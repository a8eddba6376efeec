"""Error pages in plain words; a refused request never shows a stack trace.

Under /sync/ every answer is JSON, an unknown path included (the blueprint's own handlers only see
requests routed to it).

A form post whose author is not signed in (the sign-in expired while the form was open, or someone else signed
in since) is a 401 that says so, never a 400 to "reload and send again": the device keeps that post for its
author (static/sw.js), and sends it once they are signed in again.
"""
from __future__ import annotations

import time

from flask import Flask, jsonify, render_template, request
from flask_limiter import RateLimitExceeded
from flask_wtf.csrf import CSRFError
from werkzeug.exceptions import HTTPException

from inspect_app.accounts.forms import LoginForm
from inspect_app.extensions import db, htmx, limiter
from inspect_app.idempotency import author_of_stale_page
from inspect_app.inputs import NulRefused

TEMPLATES = {400: "errors/400.html", 401: "errors/401.html", 403: "errors/403.html", 404: "errors/404.html",
             429: "errors/429.html", 500: "errors/500.html"}
# Any other 4xx (a conflict, a request too large, a method not taken): its reason in words.
REFUSED = "errors/refused.html"
# What a form htmx posts in place is answered with: the page's part (the full page includes it).
IN_PLACE = {401: "errors/_401.html"}


def _wants_json() -> bool:
    return request.path == "/sync" or request.path.startswith("/sync/")


def _page(status: int, description: str | None, error=None):
    # The exception's own headers go with the answer: a 405's Allow, a 429's Retry-After.
    headers = [(name, value) for name, value in error.get_headers() if name.lower() != "content-type"] \
        if isinstance(error, HTTPException) else []
    if _wants_json():
        return jsonify({"error": description or "The request was refused."}), status, headers
    template = TEMPLATES.get(status, REFUSED if status < 500 else TEMPLATES[500])
    if htmx and not htmx.boosted:
        template = IN_PLACE.get(status, template)
    return render_template(template, error=error, description=description), status, headers


def _login_again():
    """A sign-in form left open in another tab, sent after someone signed in on this browser (its token is no
    longer the browser's): the form again, with a token of now and the email as typed, saying why."""
    form = LoginForm(formdata=None, data={"email": request.form.get("email", "")[:254]})
    form.password.errors = ["This sign-in page was out of date (opened before someone signed in on this browser, "
                            "or left open too long), so it was not used. Enter your password again."]
    return render_template("accounts/login.html", form=form), 400


def register(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if error.code is None or error.code < 400 or (error.code >= 500 and error.code not in TEMPLATES
                                                      and not _wants_json()):
            return error  # Werkzeug's own plain page
        return _page(error.code, error.description, error)

    @app.errorhandler(CSRFError)
    def csrf_error(error):
        # The token is stale because the session it belonged to ended, or another person signed in since: a post
        # naming its author is a 401 that its device keeps for them; any other, a 400.
        refused = author_of_stale_page()
        if refused:
            return _page(401, refused, error)
        if request.endpoint == "accounts.login" and request.method == "POST":
            return _login_again()
        return _page(400, getattr(error, "description", None), error)

    @app.errorhandler(NulRefused)
    def nul_refused(error: NulRefused):
        return _page(422, str(error), error)

    @app.errorhandler(429)
    def too_many(error):
        if isinstance(error, RateLimitExceeded):  # a Flask-Limiter limit (/verify): its words, its window
            what = error.limit.error_message if isinstance(error.limit.error_message, str) else "Too many requests"
            reset = getattr(limiter.current_limit, "reset_at", None)
            wait_s = reset - time.time() if reset else 60
        else:  # the sign-in throttle (accounts/throttle.py): which count, and its Retry-After
            what, wait_s = error.description, error.retry_after or 60
        minutes = max(1, round(wait_s / 60))
        message = f"{what}. Try again in {minutes} minute{'s' if minutes != 1 else ''}."
        return _page(429, message, error)

    @app.errorhandler(500)
    def server_error(error):
        # The failed transaction must not break the page that says so (it shows who is signed in).
        db.session.rollback()
        return _page(500, "The server failed on this request; nothing of it was lost: send it again."
                     if _wants_json() else getattr(error, "description", None), error)
