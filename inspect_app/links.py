"""Links that leave the app (in mail, documents, calendar feeds, exports): under the town's public address,
PUBLIC_URL (config.public_url), never the Host a request named. A link read years later, or by a calendar that
fetched the feed through another name (an internal one behind the proxy), must be the same link."""
from __future__ import annotations

from urllib.parse import urlsplit

from flask import current_app


def public_base() -> str:
    """The app's public address, without a trailing slash."""
    return current_app.config["PUBLIC_URL"].rstrip("/")


def public_host() -> str:
    """The public address's host (and port): what names the app in a calendar event's UID."""
    return urlsplit(public_base()).netloc


def public_link(endpoint: str, **values) -> str:
    """The public address of an endpoint's page: its path, as built with no request, under PUBLIC_URL."""
    return public_base() + current_app.url_map.bind("localhost").build(endpoint, values)
