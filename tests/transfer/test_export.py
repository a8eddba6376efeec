"""`flask export`: one archive of the whole record in open formats, whose permits, parties and structures
import into an empty install unchanged."""
from __future__ import annotations

import csv
import datetime as dt
import hashlib
import io
import json
import zipfile
from decimal import Decimal

import pytest
from sqlalchemy import select

from inspect_app.accounts.models import User
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.inspections import services as inspections
from inspect_app.blobs.store import DiskStore
from inspect_app.permits import services as permits
from inspect_app.permits.models import Permit
from inspect_app.rate_limits import RateLimitCounter

from tests.conftest import _empty_tables
from tests.inspections.report_helpers import filled, start, submit


def _archive(runner, tmp_path, *extra) -> zipfile.ZipFile:
    path = tmp_path / "export.zip"
    result = runner.invoke(args=["export", "-o", str(path), *extra])
    assert result.exit_code == 0, result.output
    return zipfile.ZipFile(path)


def _rows(archive: zipfile.ZipFile, name: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(archive.read(name).decode("utf-8"))))


@pytest.fixture
def town_record(app, make):
    """Two towns' permits with every fact filled in, owners, engineers, inspectors and structures."""
    app.config["PUBLIC_URL"] = "https://inspections.example.org"
    owner = make.user("permittee", email="owner@example.org", name="Pat Owner", phone="413-555-0101")
    engineer = make.user("inspector", email="pe@example.org", name="Dana Engineer", title="Project Engineer",
                         organization="Eng Co")
    inspector = make.user("inspector", email="eci@example.org", name="Eli Inspector")
    make.user("agent", email="agent@example.org", name="Ann Agent")
    make.user("admin", town=None, email="admin@example.org", name="All Towns")
    first = make.permit("longmeadow", owner=owner, inspectors=[engineer], number="LM-SWM-2024-017",
                        site_address="123 Maple Road, Longmeadow, MA", parcel_id="12-34-5", latitude=42.0501,
                        longitude=-72.5823, owner_name="Maple Road LLC", applicant_name="Maple Applicant",
                        applicant_email="applicant@example.org", disturbed_acres=Decimal("2.400"),
                        is_redevelopment=True, sensitive_waters=True,
                        sensitive_waters_note="Longmeadow Brook (impaired for sediment)",
                        cgp_schedule="every_14_days_and_storm", npdes_id="MAR100017",
                        surety_amount=Decimal("25000.00"), issued_on=dt.date(2024, 4, 1),
                        construction_started_on=dt.date(2024, 5, 6), extension_requested_on=dt.date(2025, 3, 1),
                        extension_granted_on=dt.date(2025, 3, 20), start_extended_to=dt.date(2026, 4, 1))
    # The start's time too (§380-2): the round trip lost it, and the schedule then counted from the day's start.
    permits.update_permit(None, first, construction_started_time=dt.time(14, 30))
    permits.assign(None, first, inspector, "erosion_control_inspector")
    basin = permits.add_structure(None, first, name="IS-1", kind="infiltration", is_underground=True,
                                  design_size="40 ft x 12 ft", design_invert="El. 182.5", material="HDPE",
                                  groundwater_separation_ft=Decimal("2.50"), maintenance_task="Remove sediment",
                                  maintenance_interval_months=12)
    permits.place(None, basin, 42.0502, -72.5824)
    permits.add_structure(None, first, name="Swale", kind="bmp", is_underground=False)
    make.permit("southborough", number="SB-2024-3", latitude=42.3056, longitude=-71.5245,
                decision_filed_on=dt.date(2024, 2, 2), issued_on=dt.date(2024, 1, 30))
    db.session.commit()
    return first


def _facts() -> dict:
    """What the round trip keeps: every permit's facts, owner and inspectors (by email), structures, people."""
    found = {}
    for permit in db.session.scalars(select(Permit)):
        columns = {c.key: getattr(permit, c.key) for c in Permit.__table__.columns
                   if c.key not in ("id", "jurisdiction_id", "owner_id", "created_at", "updated_at", "revision")}
        structures = sorted(
            tuple((c.key, getattr(s, c.key)) for c in s.__table__.columns if c.key not in ("id", "permit_id"))
            for s in permit.structures)
        found[(permit.jurisdiction.profile_key, permit.number)] = (
            columns, permit.owner.email if permit.owner else None,
            sorted((a.user.email, a.capacity) for a in permit.assignments), structures)
    people = {u.email: (u.name, u.role, u.jurisdiction.profile_key if u.jurisdiction else None, u.pe_number,
                        u.certification, u.title, u.organization, u.phone)
              for u in db.session.scalars(select(User))}
    return {"permits": found, "people": people}


def test_permits_parties_and_structures_round_trip_into_an_empty_install(app, runner, tmp_path, town_record):
    before = _facts()
    with _archive(runner, tmp_path) as archive:
        archive.extractall(tmp_path / "out")
    _empty_tables()  # a new, empty install
    db.session.expire_all()
    out = tmp_path / "out"
    users = runner.invoke(args=["import", "users", str(out / "users.csv"), "--apply"])
    assert users.exit_code == 0, users.output
    imported = runner.invoke(args=["import", "permits", str(out / "permits.csv"), "--structures",
                                   str(out / "structures.csv"), "--apply"])
    assert imported.exit_code == 0, imported.output
    assert "Applied: 4 created" in imported.output  # two permits, then two structures from their file
    db.session.expire_all()
    assert _facts() == before
    # and importing the same archive again changes nothing
    again = runner.invoke(args=["import", "permits", str(out / "permits.csv"), "--structures",
                                str(out / "structures.csv")])
    assert "0 to create, 0 to update, 4 unchanged" in again.output


def test_the_archive_holds_every_kind_of_record_and_a_readme_of_every_column(app, runner, tmp_path, make,
                                                                               town_record):
    report = make.inspection(town_record, inspector=town_record.design_engineer)
    document = documents.freeze("inspection_report", report, "signed and submitted")
    draft = inspections.start_inspection(town_record.design_engineer, town_record, "erosion_control",
                                         fetch_weather=False)
    db.session.commit()
    pdf = documents.pdf_bytes(document)
    with _archive(runner, tmp_path) as archive:
        names = set(archive.namelist())
        assert {"permits.csv", "structures.csv", "users.csv", "sites.geojson", "structures.geojson",
                "audit/audit_chain.jsonl", "audit/verification.txt", "README.md", "tables/inspections.csv",
                "tables/permit_assignments.csv", "tables/documents.csv"} <= names
        (pdf_name,) = [n for n in names if n.endswith(".pdf")]
        assert pdf_name == f"documents/LM-SWM-2024-017/{document.id}-inspection_report.pdf"
        assert archive.read(pdf_name) == pdf
        reports = [row["id"] for row in _rows(archive, "tables/inspections.csv")]
        assert reports == [report.id]  # not the draft: it is its author's alone until submitted
        people = _rows(archive, "users.csv")
        assert "password_hash" not in people[0]
        assert all(method not in value for row in people for value in row.values()
                   for method in ("scrypt", "pbkdf2", "argon2"))
        sites = json.loads(archive.read("sites.geojson"))
        assert {f["properties"]["permit_number"]: f["geometry"]["coordinates"] for f in sites["features"]} == {
            "LM-SWM-2024-017": [-72.5823, 42.0501], "SB-2024-3": [-71.5245, 42.3056]}
        (placed,) = json.loads(archive.read("structures.geojson"))["features"]
        assert placed["properties"]["name"] == "IS-1" and placed["geometry"]["coordinates"] == [-72.5824, 42.0502]
        # the chain checks end to end by the README's recipe
        prev = "0" * 64
        lines = archive.read("audit/audit_chain.jsonl").decode().splitlines()
        for line in lines:
            entry = json.loads(line)
            link, digest = entry.pop("prev_hash"), entry.pop("hash")
            content = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            assert link == prev and hashlib.sha256((link + content).encode()).hexdigest() == digest
            prev = digest
        verification = archive.read("audit/verification.txt").decode()
        assert f"Chain: {len(lines)} entries verified; head: entry" in verification and prev in verification
        readme = archive.read("README.md").decode()
        described = _described(readme)
        undescribed = []
        for name in sorted(names):
            if name.endswith(".csv"):
                assert f"`{name}`" in readme
                for column in next(csv.reader(io.StringIO(archive.read(name).decode()))):
                    if not described.get(name, {}).get(column, "").endswith("."):  # a sentence, not a type
                        undescribed.append(f"{name}: {column}")
        assert undescribed == [], "columns the README does not say the meaning of"


def _described(readme: str) -> dict[str, dict[str, str]]:
    """The README's words for each column, by file: its sections are headed by the file's name, and each
    column is a row `| `column` | what it holds | ...` of its section's table. What it holds is a sentence;
    how it is stored ("date; may be empty") is not one."""
    found: dict[str, dict[str, str]] = {}
    section = None
    for line in readme.splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip()
            section = found.setdefault(title, {}) if title.endswith(".csv") else None
        elif section is not None and line.startswith("| `"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            section[cells[0].strip("`")] = cells[1]
    return found


def test_the_sign_in_counters_are_not_in_the_archive(app, runner, tmp_path, town_record):
    # Their keys name the people who tried to sign in, and from where, in every town.
    db.session.add(RateLimitCounter(key="signin/account/someone@example.org", count=3, expires_at=9e9))
    db.session.commit()
    with _archive(runner, tmp_path, "--town", "longmeadow") as archive:
        assert "tables/rate_limit_counters.csv" not in archive.namelist()
        assert all(b"someone@example.org" not in archive.read(name) for name in archive.namelist())


def test_one_town_is_exported_alone(app, runner, tmp_path, town_record):
    with _archive(runner, tmp_path, "--town", "southborough") as archive:
        assert [row["permit_number"] for row in _rows(archive, "permits.csv")] == ["SB-2024-3"]
        assert _rows(archive, "structures.csv") == []
        assert "LM-SWM-2024-017" not in archive.read("sites.geojson").decode()
        assert "Maple Road" not in archive.read("audit/audit_chain.jsonl").decode()
    result = runner.invoke(args=["export", "--town", "atlantis", "-o", str(tmp_path / "x.zip")])
    assert result.exit_code == 2 and "no town profile named 'atlantis'" in result.output


def test_a_towns_archive_leaves_out_the_audit_entries_of_drafts(app, runner, tmp_path, town_record, signed_in):
    """A draft is its author's alone until it is submitted, in the audit log's entries as in the tables: the
    town's archive holds a submitted report's history, not a draft's words. The archive of every town holds the
    whole chain, so that it can be checked end to end."""
    engineer = town_record.design_engineer
    client = signed_in(engineer)
    sent = start(client, town_record, "erosion_control")
    page = client.get(f"/inspections/{sent.id}").text
    assert client.post(f"/inspections/{sent.id}", filled(page, notes="SENT-WORDS")).status_code == 303
    assert submit(client, sent, notes="SENT-WORDS").status_code == 303
    draft = start(client, town_record, "erosion_control")
    page = client.get(f"/inspections/{draft.id}").text
    assert client.post(f"/inspections/{draft.id}", filled(page, notes="DRAFT-WORDS")).status_code == 303

    with _archive(runner, tmp_path, "--town", "longmeadow") as archive:
        chain = archive.read("audit/audit_chain.jsonl").decode()
        assert "SENT-WORDS" in chain and sent.id in chain
        assert "DRAFT-WORDS" not in chain and draft.id not in chain
    with _archive(runner, tmp_path) as archive:
        assert "DRAFT-WORDS" in archive.read("audit/audit_chain.jsonl").decode()


def test_a_frozen_pdf_altered_or_lost_on_disk_is_left_out_and_said_so(app, runner, tmp_path, make, town_record):
    """The export copied each frozen PDF without hashing it: a file changed on disk went into the archive as the
    signed document, beside a verification file saying all was well. Now it is left out, and said so."""
    engineer = town_record.design_engineer
    altered, lost, intact = (documents.freeze("inspection_report", make.inspection(town_record, inspector=engineer),
                                              "signed and submitted") for _ in range(3))
    db.session.commit()
    store = DiskStore(app.config["BLOB_ROOT"])
    path = store.path(altered.pdf_sha256)
    path.chmod(0o644)
    path.write_bytes(b"%PDF-1.4 forged")
    store.path(lost.pdf_sha256).unlink()
    with _archive(runner, tmp_path) as archive:
        pdfs = [n for n in archive.namelist() if n.endswith(".pdf")]
        assert pdfs == [f"documents/LM-SWM-2024-017/{intact.id}-inspection_report.pdf"]
        assert archive.read(pdfs[0]) == documents.pdf_bytes(intact)
        verification = archive.read("audit/verification.txt").decode()
        assert "Documents: 2 frozen PDF(s) left out of this archive" in verification
        assert (f"{altered.id}-inspection_report.pdf: its PDF file does not match the SHA-256 {altered.pdf_sha256} "
                "it was frozen with (the file hashes to ") in verification
        assert f"{lost.id}-inspection_report.pdf: its PDF file does not match" in verification
        assert "(the file is missing)" in verification
