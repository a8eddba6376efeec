"""The check the timed commands (cron) make first: every town in the record has its profile loaded.

A town added as a TOML file in PROFILE_DIR is loaded only where PROFILE_DIR is set. A cron job whose environment
lacks it ran `flask dashboard refresh` as if the town's profile were gone: it replaced the town's stored
obligations with "The town profile ... is not loaded." and ended as if all was well.
"""
from __future__ import annotations

import click
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.permits.models import Jurisdiction
from inspect_app.permits.services import profiles


def require_every_town_profile() -> None:
    """click's error, and nothing done, where a town of the record has no profile loaded."""
    loaded = profiles()
    missing = sorted(key for key in db.session.scalars(select(Jurisdiction.profile_key)) if key not in loaded)
    if missing:
        raise click.ClickException(
            f"No town profile is loaded for {', '.join(repr(key) for key in missing)}: set PROFILE_DIR (the folder "
            "of the towns' TOML files) as the app servers have it (docs/deploy.md), and run again. Nothing was "
            "changed.")
