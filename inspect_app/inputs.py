"""What every request's input must be before a view reads it, checked once for the whole app.

- No NUL character anywhere (query, form, JSON, URL): PostgreSQL text cannot hold one, so a NUL is
  refused with 422 naming the field, before any view or database sees it. A sync push is the
  exception: each of its operations is answered on its own (sync/services.py).
- JSON nested deeper than Python can parse is a 400, like any other JSON that cannot be read.
- Numbers in a query string are plain ASCII whole numbers within a range (`query_int`).
"""
from __future__ import annotations

import json
from typing import Any

from flask import Flask, abort, request
from flask.json.provider import DefaultJSONProvider

# Endpoints that read the raw body themselves (a JSON check here would consume it).
RAW_BODY_ENDPOINTS = {"sync.push", "sync.blob_chunk"}


class NulRefused(Exception):
    """A value with a NUL character; `field` names where it was."""

    def __init__(self, field: str) -> None:
        super().__init__(f"The field \u201c{field}\u201d contains a NUL character (\\0), which cannot be "
                         "stored. Remove it and send again.")
        self.field = field


class JSONProvider(DefaultJSONProvider):
    """Flask's JSON, with JSON nested too deeply for the parser refused as unreadable (a 400)."""

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return loads(s, **kwargs)


def loads(s: str | bytes, **kwargs: Any) -> Any:
    """`json.loads`, raising ValueError (not RecursionError) for JSON nested too deeply."""
    try:
        return json.loads(s, **kwargs)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None


def nul_fields(value: Any, where: str = "") -> list[str]:
    """The paths (`a.b.0`) of every string, key included, in `value` that holds a NUL character."""
    if isinstance(value, str):
        return [where or "body"] if "\x00" in value else []
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and "\x00" in key:
                found.append(path)
            found += nul_fields(item, path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += nul_fields(item, f"{where}.{index}" if where else str(index))
    return found


def refuse_nul() -> None:
    """Before every view: refuse a NUL in the URL, the query string, the form or a JSON body."""
    for name, value in (request.view_args or {}).items():
        if isinstance(value, str) and "\x00" in value:
            abort(404)
    for values in (request.args, request.form):
        for name, value in values.items(multi=True):
            if "\x00" in name or "\x00" in value:
                raise NulRefused(name.replace("\x00", "\\0"))
    for name, upload in request.files.items(multi=True):
        if "\x00" in (upload.filename or ""):
            raise NulRefused(name)
    if request.is_json and request.blueprint != "sync" and request.method not in ("GET", "HEAD", "OPTIONS"):
        # Only the sync API reads JSON. Flask-WTF takes a JSON body for a form's fields, and an array, a number or a
        # value of the wrong type among them (an object for a reason) broke the form: a 500 on any form's route.
        abort(415, "Forms are sent as form data, not JSON.")
    if request.is_json and request.endpoint not in RAW_BODY_ENDPOINTS:
        found = nul_fields(request.get_json(silent=True))
        if found:
            raise NulRefused(found[0])


def query_int(name: str, default: int, low: int, high: int, *, refuse: bool = True) -> int:
    """A whole number from the query string; `default` when absent or empty.

    Anything else than ASCII digits in `low`..`high` is a 400 naming the parameter, or with
    `refuse=False` (a page's filters, which drop what they cannot use) the default, or the nearest
    bound for a number out of range. Only ASCII digits: `int()` would take "١٢" and `str.isdigit()`
    takes "²", which `int()` then refuses.
    """
    raw = request.args.get(name, "").strip()
    if not raw:
        return default
    digits = raw.isascii() and raw.isdigit()
    value = int(raw) if digits and len(raw) <= len(str(high)) else (high + 1 if digits else None)
    if value is not None and low <= value <= high:
        return value
    if refuse:
        abort(400, f"?{name}= must be a whole number from {low} to {high}.")
    return default if value is None else min(max(value, low), high)


def register(app: Flask) -> None:
    app.json = JSONProvider(app)
    app.before_request(refuse_nul)
