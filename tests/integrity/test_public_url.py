"""A frozen document's /verify link and QR code come from the PUBLIC_URL setting, never from the request
(issue 29, finding 3): a report submitted with a forged Host header still points to the town's address. A
production app server refuses to start without PUBLIC_URL; elsewhere (`make run`, tests) documents link to
http://127.0.0.1:5000."""
from __future__ import annotations

import datetime as dt
import io
import os
import subprocess
import sys
from pathlib import Path

import pypdf
import pytest
from sqlalchemy import select

from inspect_app import create_app
from inspect_app.config import DEVELOPMENT_PUBLIC_URL, SettingError
from inspect_app.documents.models import FrozenDocument
from inspect_app.extensions import db
from tests.inspections.report_helpers import filled, start
from tests.integrity.test_verify_page import _qr_codes

ROOT = Path(__file__).resolve().parent.parent.parent
TOWN = "https://permits.longmeadow.example"


@pytest.mark.parametrize("configured", [TOWN, None], ids=["PUBLIC_URL set", "development default"])
def test_a_report_submitted_with_a_forged_host_links_its_pdf_to_the_public_url(
        configured, app, make, signed_in, tmp_path):
    if configured:
        app.config["PUBLIC_URL"] = configured
    public = configured or DEVELOPMENT_PUBLIC_URL
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    draft = start(browser, permit, "erosion_control")
    form = filled(browser.get(f"/inspections/{draft.id}").text)
    # The attacker's request: the same session, sent to the server under another host name.
    browser.client.set_cookie("session", browser.client.get_cookie("session").value, domain="evil.example")
    response = browser.client.post(f"/inspections/{draft.id}/submit", data={"csrf_token": browser.token, **form},
                                    headers={"Host": "evil.example"})
    assert response.status_code == 303, response.text

    document = db.session.scalars(select(FrozenDocument).where(FrozenDocument.subject_id == draft.id)).one()
    pdf = browser.get(f"/documents/frozen/{document.id}.pdf").data
    text = " ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages)
    assert f"Verify at {public}/verify/{document.id}" in text
    assert "evil.example" not in text
    (code,) = _qr_codes(pdf, tmp_path)
    assert code == f"{public}/verify/{document.id}?sha256={document.record_sha256}"


def _start_app_server(tmp_path, **settings) -> subprocess.CompletedProcess:
    """Load wsgi.py, as gunicorn's master does, with the deployment's settings and `settings`."""
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'server.sqlite3'}", "BLOB_ROOT": str(tmp_path / "blobs"),
           "SECRET_KEY": "public-url-test", "PATH": os.environ.get("PATH", "/usr/bin:/bin")} | settings
    return subprocess.run([sys.executable, "-c", "import wsgi"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_production_app_server_refuses_to_start_without_public_url(tmp_path):
    refused = _start_app_server(tmp_path)
    assert refused.returncode != 0
    assert "PUBLIC_URL is not set" in refused.stderr and "inspect-app.env" in refused.stderr
    wrong = _start_app_server(tmp_path, PUBLIC_URL="evil.example/verify?x=1")
    assert wrong.returncode != 0 and "PUBLIC_URL must be the site's public address" in wrong.stderr
    started = _start_app_server(tmp_path, PUBLIC_URL=f"{TOWN}/")
    assert started.returncode == 0, started.stderr


def test_the_development_server_and_commands_start_without_it(tmp_path, monkeypatch):
    """`make run` (`flask run`, `flask demo load`) needs no setup: its documents link to where it serves."""
    monkeypatch.delenv("PUBLIC_URL", raising=False)
    app = create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'dev.sqlite3'}"})
    assert (app.debug, app.testing, app.config["PUBLIC_URL"]) == (False, False, DEVELOPMENT_PUBLIC_URL)
    with pytest.raises(SettingError, match="PUBLIC_URL is not set"):
        create_app({"SQLALCHEMY_DATABASE_URI": f"sqlite:///{tmp_path / 'dev.sqlite3'}"}, commands=False)
