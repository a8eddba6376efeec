"""An app whose PROFILE_DIR adds towns made only of TOML files (SPEC *Rules are data*), for the tests of a town
that is not built in."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from flask import Flask

from inspect_app import create_app
from inspect_app.extensions import db
from tests.conftest import IsolatedClient, _empty_tables


def app_with_towns(database_url: str, tmp_path: Path, towns: dict[str, str]) -> Iterator[Flask]:
    """Yield the app, in its context, with `towns` (file name without .toml -> TOML text) in its PROFILE_DIR."""
    folder = tmp_path / "towns"
    folder.mkdir()
    for key, text in towns.items():
        (folder / f"{key}.toml").write_text(text)
    app = create_app({
        "TESTING": True, "SQLALCHEMY_DATABASE_URI": database_url, "BLOB_ROOT": str(tmp_path / "blobs"),
        "SERVER_NAME": None, "PASSWORD_HASH_METHOD": "pbkdf2:sha256:1000", "WEATHER_ENDPOINT": "http://127.0.0.1:9",
        "PROFILE_DIR": str(folder),
    })
    app.test_client_class = IsolatedClient
    with app.app_context():
        _empty_tables()
        yield app
        db.session.remove()
        db.engine.dispose()
