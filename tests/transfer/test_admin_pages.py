"""The admin's Import & export page: upload, the streamed dry run, Apply; templates; the export download."""
from __future__ import annotations

import csv
import html
import io
import re
import zipfile

import pytest
from openpyxl import load_workbook
from sqlalchemy import select

from inspect_app.accounts.models import User
from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.permits.models import Permit

from tests.transfer.sheets import PERMIT_HEADER, damaged_workbook, permit_row, table_rows, write_csv, write_xlsx

import factories


def _csv(rows) -> bytes:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue().encode()


def _upload(browser, data: bytes, name: str = "permits.csv", kind: str = "permits"):
    return browser.post(f"/transfer/import/{kind}", {f"{kind}-file": (io.BytesIO(data), name)},
                        content_type="multipart/form-data")


def _permit_numbers() -> list[str]:
    return list(db.session.scalars(select(Permit.number).order_by(Permit.number)))


@pytest.mark.parametrize("role", ["inspector", "agent", "permittee"])
def test_only_admins_reach_the_page(app, client, make, role):
    browser = factories.SignedIn(client, make.user(role))
    for url in ("/transfer/", "/transfer/export", "/transfer/template/permits.csv"):
        assert browser.get(url).status_code == 403
    assert _upload(browser, _csv([permit_row("LM-1")])).status_code == 403
    assert "Import &amp; export" not in browser.get("/permits/").text


def test_signed_out_people_are_sent_to_sign_in(app, client):
    response = client.get("/transfer/")
    assert response.status_code == 302 and "/login" in response.location


def test_upload_dry_run_then_apply(app, client, make, blob_backend):
    # The uploaded file is kept in the app's store (disk, or the S3 bucket) between the dry run and the apply.
    admin = make.user("admin", town=None)
    browser = factories.SignedIn(client, admin)
    page = browser.get("/transfer/")
    assert page.status_code == 200 and 'hx-boost="false"' in page.text
    assert "Import &amp; export" in page.text  # the menu link
    before = table_rows()
    uploaded = _upload(browser, _csv([permit_row("LM-1"), permit_row("LM-2")]))
    assert uploaded.status_code == 303
    text = browser.get(uploaded.location, buffered=True).get_data(as_text=True)
    assert "Dry run: nothing was changed" in text and "LM-1" in text and "LM-2" in text
    assert _permit_numbers() == []
    action = re.search(r'action="([^"]+/apply[^"]*)"', text).group(1).replace("&amp;", "&")
    applied = browser.post(action, buffered=True).get_data(as_text=True)
    assert "Applied" in applied and "2 created, 0 updated, 0 unchanged" in applied
    assert _permit_numbers() == ["LM-1", "LM-2"]
    assert set(table_rows()) == set(before)


def test_a_workbook_uploaded_is_read_and_applied(app, client, make, blob_backend, tmp_path):
    # The file is kept under its SHA-256 alone, with no .xlsx at the end of its name: openpyxl, handed that name,
    # refused every workbook ("does not support file format"), and only CSV files could be imported here.
    browser = factories.SignedIn(client, make.user("admin", town=None))
    workbook = write_xlsx(tmp_path / "permits.xlsx", {"permits": [
        PERMIT_HEADER, *([permit_row(n)[h] for h in PERMIT_HEADER] for n in ("LM-1", "LM-2"))]})
    uploaded = _upload(browser, workbook.read_bytes(), "permits.xlsx")
    text = browser.get(uploaded.location, buffered=True).get_data(as_text=True)
    assert "cannot be read" not in text and "Dry run: nothing was changed" in text and "LM-2" in text
    action = re.search(r'action="([^"]+/apply[^"]*)"', text).group(1).replace("&amp;", "&")
    assert "2 created" in browser.post(action, buffered=True).get_data(as_text=True)
    assert _permit_numbers() == ["LM-1", "LM-2"]


def test_a_workbook_damaged_inside_its_sheet_is_a_problem_of_the_file(app, client, make, tmp_path):
    browser = factories.SignedIn(client, make.user("admin", town=None))
    uploaded = _upload(browser, damaged_workbook(tmp_path), "permits.xlsx")
    text = html.unescape(browser.get(uploaded.location, buffered=True).get_data(as_text=True))
    assert "The sheet 'permits' cannot be read from row" in text and "error of the app" not in text
    assert "/apply" not in text and _permit_numbers() == []


def test_a_bad_file_shows_its_problems_and_offers_no_apply(app, client, make):
    browser = factories.SignedIn(client, make.user("admin", town=None))
    uploaded = _upload(browser, _csv([permit_row("LM-1"), permit_row("LM-1")]))
    text = browser.get(uploaded.location, buffered=True).get_data(as_text=True)
    assert "1 problem(s): nothing was changed" in text
    assert "Permit LM-1 is also on row 2" in text and "/apply" not in text
    refused = browser.post(uploaded.location + "/apply" if "?" not in uploaded.location else
                           uploaded.location.replace("?", "/apply?", 1), buffered=True).get_data(as_text=True)
    assert "nothing was changed" in refused
    assert _permit_numbers() == []


def test_progress_is_shown_while_a_large_file_is_read(app, client, make, tmp_path):
    browser = factories.SignedIn(client, make.user("admin", town=None))
    rows = [permit_row(f"LM-{n:04d}") for n in range(2100)]
    uploaded = _upload(browser, write_csv(tmp_path / "p.csv", rows).read_bytes())
    # Streamed: the test client reads it in the request's own context (buffered), keeping its parts as sent.
    response = browser.get(uploaded.location, buffered=True)
    parts = list(response.response)
    progress = [i for i, part in enumerate(parts) if b"rows read" in part]
    outcome = next(i for i, part in enumerate(parts) if b"import-outcome" in part)
    assert len(progress) >= 2 and max(progress) < outcome
    text = b"".join(parts).decode()
    assert "1,000 rows read" in text and "2,000 rows read" in text and "2,100 rows read" in text


def test_an_upload_without_the_csrf_token_is_refused(app, client, make):
    browser = factories.SignedIn(client, make.user("admin", town=None))
    response = client.post("/transfer/import/permits", data={"permits-file": (io.BytesIO(b"x"), "p.csv")},
                           content_type="multipart/form-data")
    assert response.status_code == 400
    assert browser.get("/transfer/").status_code == 200


def test_not_a_spreadsheet_is_refused_beside_the_field(app, client, make):
    browser = factories.SignedIn(client, make.user("admin", town=None))
    response = _upload(browser, b"%PDF-1.4", name="permits.pdf")
    assert response.status_code == 422 and "is neither a .csv nor an .xlsx file" in response.text
    missing = browser.post("/transfer/import/permits", {}, content_type="multipart/form-data")
    assert missing.status_code == 422 and "Choose the file to import." in missing.text


def test_an_upload_is_its_uploaders_alone(app, client, make):
    first = factories.SignedIn(app.test_client(), make.user("admin", town=None))
    uploaded = _upload(first, _csv([permit_row("LM-1")]))
    other = factories.SignedIn(app.test_client(), make.user("admin", town=None))
    assert other.get(uploaded.location, buffered=True).status_code == 404
    assert other.post(uploaded.location.replace("?", "/apply?", 1), buffered=True).status_code == 404
    assert _permit_numbers() == []


def test_a_town_admin_imports_into_their_town_alone(app, client, make):
    browser = factories.SignedIn(client, make.user("admin", town="longmeadow"))
    uploaded = _upload(browser, _csv([permit_row("SB-1", town="southborough", latitude="42.3", longitude="-71.52")]))
    text = browser.get(uploaded.location, buffered=True).get_data(as_text=True)
    assert "You import into Longmeadow only." in text
    mine = _upload(browser, _csv([permit_row("LM-1", town="")]))  # no town: their own
    check = browser.get(mine.location, buffered=True).get_data(as_text=True)
    action = re.search(r'action="([^"]+/apply[^"]*)"', check).group(1).replace("&amp;", "&")
    assert "Applied" in browser.post(action, buffered=True).get_data(as_text=True)
    (permit,) = db.session.scalars(select(Permit))
    assert permit.jurisdiction.profile_key == "longmeadow"


def test_a_town_admin_attaches_only_the_people_the_permit_form_offers_and_learns_nothing_of_others(app, client, make):
    """The permit form offers a town's admin the permittees and inspectors who work in their town or nowhere yet
    (`people_to_choose`). The import looked owners and engineers up among every account of the state: Longmeadow's
    admin attached Southborough's people to a Longmeadow permit, and the dry run told which addresses had accounts.
    Someone who works only in another town is now answered as an address with no account."""
    theirs = make.user("permittee", email="south-owner@example.org")
    make.permit("southborough", owner=theirs, latitude=42.30, longitude=-71.53)
    engineer = make.user("inspector", email="south-eng@example.org")
    make.permit("southborough", inspectors=[engineer], latitude=42.30, longitude=-71.53)
    new_owner = make.user("permittee", email="new-owner@example.org")  # works nowhere yet: offered
    browser = factories.SignedIn(client, make.user("admin", town="longmeadow"))
    refused = _upload(browser, _csv([permit_row("LM-77", town="", owner_email=theirs.email,
                                                engineer_email=engineer.email)]))
    text = html.unescape(browser.get(refused.location, buffered=True).get_data(as_text=True))
    assert f"No permittee's account you may choose has the email '{theirs.email}'" in text
    assert f"No inspector's account you may choose has the email '{engineer.email}'" in text
    nobody = _upload(browser, _csv([permit_row("LM-77", town="", owner_email="nobody@example.org")]))
    assert "No permittee's account you may choose has the email 'nobody@example.org'" in html.unescape(browser.get(
        nobody.location, buffered=True).get_data(as_text=True))
    assert re.search(r'action="[^"]+/apply', text) is None
    mine = _upload(browser, _csv([permit_row("LM-78", town="", owner_email=new_owner.email)]))
    check = browser.get(mine.location, buffered=True).get_data(as_text=True)
    action = re.search(r'action="([^"]+/apply[^"]*)"', check).group(1).replace("&amp;", "&")
    assert "Applied" in browser.post(action, buffered=True).get_data(as_text=True)
    (permit,) = db.session.scalars(select(Permit).where(Permit.number == "LM-78"))
    assert permit.owner_id == new_owner.id


def test_the_templates_import_as_they_are(app, client, make, runner, tmp_path):
    browser = factories.SignedIn(client, make.user("admin", town=None))
    workbook = browser.get("/transfer/template/permits.xlsx")
    assert workbook.status_code == 200
    sheets = load_workbook(io.BytesIO(workbook.data), read_only=True).sheetnames
    assert sheets == ["permits", "structures"]
    (tmp_path / "permits.xlsx").write_bytes(workbook.data)
    make.user("permittee", email="owner@example.org")
    make.user("inspector", email="engineer@example.org")
    result = runner.invoke(args=["import", "permits", str(tmp_path / "permits.xlsx")])
    assert result.exit_code == 0, result.output
    assert "create                   LM-SWM-2024-017" in result.output
    for name in ("permits.csv", "structures.csv", "users.csv", "users.xlsx"):
        assert browser.get(f"/transfer/template/{name}").status_code == 200
    assert browser.get("/transfer/template/other.csv").status_code == 404


def test_a_town_admin_downloads_their_towns_record(app, client, make):
    make.permit("longmeadow", number="LM-1")
    make.permit("southborough", number="SB-1", latitude=42.3, longitude=-71.52)
    browser = factories.SignedIn(client, make.user("admin", town="longmeadow"))
    response = browser.get("/transfer/export")
    assert response.status_code == 200 and response.mimetype == "application/zip"
    data = response.data
    response.close()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        permits = archive.read("permits.csv").decode()
        assert "LM-1" in permits and "SB-1" not in permits
        assert "SB-1" not in archive.read("sites.geojson").decode()
        assert "SB-1" not in archive.read("audit/audit_chain.jsonl").decode()


def test_a_town_admin_makes_people_of_their_town_alone(app, client, make):
    make.permit("southborough", owner=make.user("permittee", email="sb-owner@example.org"))
    admin = make.user("admin", town="longmeadow")
    browser = factories.SignedIn(client, admin)
    people = [{"email": "new-admin@example.org", "name": "New Admin", "role": "admin", "town": ""},
              {"email": "sb-agent@example.org", "name": "SB Agent", "role": "agent", "town": "southborough"},
              {"email": "sb-owner@example.org", "name": "Renamed", "role": "permittee", "town": ""}]
    uploaded = _upload(browser, _csv(people), name="users.csv", kind="users")
    text = browser.get(uploaded.location, buffered=True).get_data(as_text=True)
    assert "You import into Longmeadow only." in text
    assert "sb-owner@example.org has an account you do not manage" in text
    uploaded = _upload(browser, _csv(people[:1]), name="users.csv", kind="users")
    check = browser.get(uploaded.location, buffered=True).get_data(as_text=True)
    action = re.search(r'action="([^"]+/apply[^"]*)"', check).group(1).replace("&amp;", "&")
    applied = browser.post(action, buffered=True).get_data(as_text=True)
    # No mail server here: the link is on the Sent mail page, and the page says so (it said "mailed").
    assert "1 set-password link(s) kept on the Sent mail page (no mail server is set)" in applied
    made = db.session.scalar(select(User).where(User.email == "new-admin@example.org"))
    assert made.role == "admin" and made.jurisdiction.profile_key == "longmeadow"  # never the admin of all towns
    # the link mailed is recorded as sent by the admin who applied the import
    invited = db.session.scalars(select(AuditEntry.actor_id).where(AuditEntry.action == "user.invite",
                                                                   AuditEntry.entity_id == made.id)).all()
    assert invited == [admin.id]


def test_a_towns_admin_reaches_the_set_password_links_of_the_people_they_import(app, client, make):
    # With no mail server the Sent mail page is how a link reaches its person; a town's admin found it linked
    # from no page, and at /mail/ saw only mail about a permit of the town (an invitation names none).
    app.config["SMTP_HOST"] = None
    make.town("southborough")
    browser = factories.SignedIn(client, make.user("admin", town="longmeadow"))
    other_town = factories.SignedIn(app.test_client(), make.user("admin", town="southborough"))
    uploaded = _upload(browser, _csv([{"email": "new.inspector@example.org", "name": "Nia New", "role": "inspector",
                                       "town": ""}]), name="users.csv", kind="users")
    check = browser.get(uploaded.location, buffered=True).get_data(as_text=True)
    action = re.search(r'action="([^"]+/apply[^"]*)"', check).group(1).replace("&amp;", "&")
    applied = browser.post(action, buffered=True).get_data(as_text=True)
    assert 'href="/mail/"' in applied and 'href="/mail/"' in browser.get("/transfer/").text
    sent = browser.get("/mail/").text
    assert "new.inspector@example.org" in sent and "/set-password/" in sent
    assert "new.inspector@example.org" not in other_town.get("/mail/").text  # another town's admin: not theirs
