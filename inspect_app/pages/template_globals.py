"""The template globals that ask the policy (`allowed`) and a permit's town (`cite`), for every page, and the
longest label a photo's markup may carry (`markup_label_max`).

They sit above the domains with the pages: templating.py, which every domain imports for its formatting
filters, then needs neither the policy nor the permits' services.
"""
from __future__ import annotations

from flask import Flask
from flask_login import current_user

from inspect_app.accounts import policy
from inspect_app.permits.services import profile_of
from inspect_app.photos.markup import LABEL_MAX_CHARS


def allowed(action: str, permit=None) -> bool:
    """Whether the signed-in user may do `action` (on `permit`): the policy table, for showing a control."""
    return policy.allowed(current_user, action, permit)


def cite(permit, purpose: str) -> str:
    """' (§380-18)': the permit's town's clause for `purpose`, or "" where the town cites none, so a page
    names only its own town's sections (profile `citations`)."""
    clause = profile_of(permit).cite(purpose)
    return f" ({clause})" if clause else ""


def register(app: Flask) -> None:
    app.jinja_env.globals.update(allowed=allowed, cite=cite, markup_label_max=LABEL_MAX_CHARS)
