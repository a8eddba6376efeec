"""The import page in a real headless Chromium: upload, read the dry run as it streams, apply."""
import pytest
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.permits.models import Permit

from tests.transfer.sheets import permit_row, write_csv

pytestmark = pytest.mark.browser


def test_an_admin_checks_then_applies_a_permits_file(make, live_server, page, sign_in, tmp_path):
    sign_in(page, make.user("admin", town="longmeadow"))
    page.click("text=Import & export")
    path = write_csv(tmp_path / "permits.csv", [permit_row(f"LM-{n:04d}", town="") for n in range(1200)])
    page.set_input_files("#permits-file", str(path))
    page.click("#import-permits button:has-text('Check the file')")
    page.wait_for_selector("#import-outcome h2:has-text('Dry run: nothing was changed')", timeout=120_000)
    assert "1,000 rows read" in page.inner_text(".import-progress")
    assert db.session.scalar(select(Permit.id).limit(1)) is None
    page.click("#import-outcome button:has-text('Apply')")
    # The page shows the rows read while the import runs; on a loaded two-core machine the whole takes a while.
    page.wait_for_selector("#import-outcome h2:has-text('Applied')", timeout=180_000)
    assert "1200 created, 0 updated, 0 unchanged" in page.inner_text("#import-outcome")
    db.session.expire_all()
    assert len(db.session.scalars(select(Permit.id)).all()) == 1200
