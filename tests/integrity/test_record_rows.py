"""`flask audit verify` checks each signed or issued record against what its audit entries say: a row changed
with its trigger dropped (an attacker with the database password), or changed where the trigger lets the app
fill it in later (weather, a lifting, a review) but without the app, a record deleted or made outside the
app, and a frozen PDF altered on disk are each found, on SQLite and PostgreSQL."""
from __future__ import annotations

import datetime as dt
import hashlib
import os
import re
from decimal import Decimal
from pathlib import Path

import pytest
from sqlalchemy import select, text

from inspect_app.blobs import files
from inspect_app.certifications import services as certifications
from inspect_app.certifications.models import OMCertification
from inspect_app.completion import services as completion
from inspect_app.conditions import services as conditions
from inspect_app.documents.models import FrozenDocument
from inspect_app.enforcement import services as enforcement
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db
from inspect_app.waivers import services as waivers
from tests.inspections.report_helpers import start, submit
from tests.integrity.test_audit_chain import _unguarded, _verify
from tests.s3_server import bucket_client


def _raw(sql: str, **params) -> None:
    """One statement in its own transaction, with the guards in place, as at a database prompt."""
    db.session.remove()
    with db.engine.begin() as connection:
        connection.execute(text(sql), params)


@pytest.fixture
def agent(make):
    """An agent of the permits' town."""
    return make.user("agent")


@pytest.fixture
def signed(make, signed_in, completed_permit, agent):
    """A report submitted, a stop-work order issued, an O&M certification signed: each through the app."""
    inspector, owner = make.user("inspector"), make.user("permittee")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    report = start(browser, permit, "erosion_control")
    assert submit(browser, report, notes="Silt fence holding").status_code == 303
    order = enforcement.issue_stop_work(agent, permit, "Silt fence down along the brook")
    db.session.commit()
    done = completed_permit(owner)
    certifying = signed_in(owner)
    certifying.post(f"/permits/{done.id}/om/certify", {"cert-signer_name": "Pat Owner", "cert-agree": "y",
                                                       "cert-without_entries": "y"})
    certification = db.session.scalars(select(OMCertification)).one()
    document = db.session.scalars(select(FrozenDocument).where(FrozenDocument.subject_id == order.id)).one()
    return {"inspections": report.id, "stop_work_orders": order.id, "om_certifications": certification.id,
            "documents": document.id}


CHANGES = [  # (table, change, column): one signed or issued record of each kind, changed behind the app's back
    ("inspections", "notes = 'Everything was fine'", "notes"),
    ("inspections", "performed_at = '2020-01-01 09:00:00'", "performed_at"),
    ("stop_work_orders", "reason = 'Nothing at all'", "reason"),
    ("om_certifications", "signer_name = 'New Owner'", "signer_name"),
    ("documents", "signed_by = 'Someone Else'", "signed_by"),
]


def test_records_made_through_the_app_match_their_log_and_each_row_changed_behind_it_is_found(signed, runner):
    # The records are made once (a report, an order, a certification and their PDFs take seconds): first
    # all of them check out, then each changed row is named by the next run, with the column that differs.
    result = _verify(runner)
    assert result.exit_code == 0, result.output
    checked = int(result.output.splitlines()[1].split()[0])
    assert checked >= len(signed) + 2  # and the documents of the report and of the certification
    assert "signed or issued records match their audit entries" in result.output

    for table, change, column in CHANGES:  # one at a time: the run stops at the first record that differs
        with _unguarded() as connection:
            where = f"WHERE id = '{signed[table]}'"
            stored = connection.exec_driver_sql(f"SELECT {column} FROM {table} {where}").scalar_one()
            connection.exec_driver_sql(f"UPDATE {table} SET {change} {where}")
        result = _verify(runner)
        assert result.exit_code == 1
        assert f"{table} {signed[table]}: {column} differ from its last audit entry" in result.output
        with _unguarded() as connection:  # put back as signed: the next run passes this record again
            connection.execute(text(f"UPDATE {table} SET {column} = :stored {where}"), {"stored": stored})
    assert _verify(runner).exit_code == 0


def _problem(result, table: str, record_id: str) -> str:
    """The line of `flask audit verify`'s output that names this record."""
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.startswith(f"{table} {record_id}: ")]
    assert len(lines) == 1, result.output
    return lines[0]


def test_weather_and_rain_written_on_a_submitted_report_outside_the_app_are_found(signed, runner):
    # The trigger lets the server fill in pending weather, so the database takes this; no entry records it.
    _raw("UPDATE inspections SET weather_status = 'complete', temperature_c = 21.5, precip_24h_mm = 0, "
         "precip_hours = 24 WHERE id = :id", id=signed["inspections"])
    problem = _problem(_verify(runner), "inspections", signed["inspections"])
    assert problem.endswith("weather_status, temperature_c, precip_24h_mm, precip_hours differ from its last "
                            "audit entry; the row was changed outside the app")


def test_a_stop_work_order_lifted_outside_the_app_is_found(signed, agent, runner):
    _raw("UPDATE stop_work_orders SET lifted_at = CURRENT_TIMESTAMP, lifted_by_id = :agent, "
         "lift_reason = 'Corrected' WHERE id = :id", id=signed["stop_work_orders"], agent=agent.id)
    problem = _problem(_verify(runner), "stop_work_orders", signed["stop_work_orders"])
    assert "lifted_by_id, lifted_at, lift_reason differ from its last audit entry" in problem


def test_a_certification_accepted_outside_the_app_is_found(signed, agent, runner):
    _raw("UPDATE om_certifications SET status = 'accepted', reviewed_by_id = :agent WHERE id = :id",
         id=signed["om_certifications"], agent=agent.id)
    problem = _problem(_verify(runner), "om_certifications", signed["om_certifications"])
    assert "status, reviewed_by_id differ from its last audit entry" in problem


def test_a_submitted_report_flipped_back_to_draft_is_found(signed, runner):
    with _unguarded() as connection:
        connection.execute(text("UPDATE inspections SET status = 'draft', submitted_at = NULL WHERE id = :id"),
                           {"id": signed["inspections"]})
    problem = _problem(_verify(runner), "inspections", signed["inspections"])
    assert "status, submitted_at differ from its last audit entry" in problem


def test_a_deleted_signed_certification_is_found(signed, runner):
    with _unguarded() as connection:
        connection.execute(text("DELETE FROM om_certifications WHERE id = :id"), {"id": signed["om_certifications"]})
    problem = _problem(_verify(runner), "om_certifications", signed["om_certifications"])
    assert re.search(r": a signed O&M certification by its last audit entry \(entry \d+, om_certification.submit\), "
                     "is gone: the row was deleted outside the app$", problem), problem


def test_a_deleted_submitted_report_is_found(signed, runner):
    report = signed["inspections"]
    with _unguarded() as connection:  # its checklist answers and anything else naming it go first
        for table in reversed(db.metadata.sorted_tables):
            for key in table.foreign_keys:
                if key.column.table.name == "inspections" and table.name != "inspections":
                    connection.execute(table.delete().where(key.parent == report))
        connection.execute(text("DELETE FROM inspections WHERE id = :id"), {"id": report})
    problem = _problem(_verify(runner), "inspections", report)
    assert re.search(r": a submitted inspection report by its last audit entry \(entry \d+, inspection.submit\), "
                     "is gone: the row was deleted outside the app$", problem), problem


def test_a_frozen_pdf_altered_in_the_store_is_not_served_and_is_found(blob_backend, s3_settings, signed, agent,
                                                                  signed_in, runner):
    # On disk, or in the S3 bucket (BLOB_BACKEND=s3): the documents' checks read the one store the app uses.
    document = db.session.get(FrozenDocument, signed["documents"])
    genuine = files.blob_store().read(document.pdf_sha256)
    altered = genuine.replace(b"Silt fence down", b"Silt fence fine") + b"%altered\n"
    if blob_backend == "s3":
        key = f"{document.pdf_sha256[:2]}/{document.pdf_sha256[2:4]}/{document.pdf_sha256}"
        bucket_client(s3_settings).put_object(Bucket=s3_settings["S3_BUCKET"], Key=key, Body=altered)
    else:
        path = Path(files.blob_store().path(document.pdf_sha256))
        os.chmod(path, 0o644)
        path.write_bytes(altered)
    assert files.blob_store().stored_sha256(document.pdf_sha256) == hashlib.sha256(altered).hexdigest()
    browser = signed_in(agent)
    for url in (f"/documents/frozen/{document.id}.pdf", f"/documents/stop-work-orders/{document.subject_id}.pdf"):
        answer = browser.get(url)
        assert answer.status_code == 500 and answer.mimetype == "text/html", url
        assert "does not match the file that was frozen" in answer.text, url
    problem = _problem(_verify(runner), "documents", document.id)
    assert f"its PDF file does not match the SHA-256 {document.pdf_sha256} it was frozen with" in problem


def test_a_final_record_with_no_audit_entry_is_found(signed, agent, runner):
    # A certificate inserted at a database prompt: no trigger refuses an insert, and nothing records it.
    order = db.session.get(StopWorkOrder, signed["stop_work_orders"])
    _raw("INSERT INTO certificates_of_completion (id, permit_id, issued_by_id, issued_at) "
         "VALUES ('forged-certificate', :permit, :agent, CURRENT_TIMESTAMP)", permit=order.permit_id, agent=agent.id)
    problem = _problem(_verify(runner), "certificates_of_completion", "forged-certificate")
    assert problem.endswith("an issued certificate of completion that no audit entry records: it was made "
                            "outside the app")


def test_a_surety_release_changed_outside_the_app_is_found(make, agent, runner):
    permit = make.permit(surety_amount=Decimal("20000.00"), construction_started_on=dt.date(2026, 6, 2))
    release = completion.release_surety(agent, permit, Decimal("5000"), "Phase 1 stabilized").id
    db.session.commit()
    assert _verify(runner).exit_code == 0
    with _unguarded() as connection:
        connection.execute(text("UPDATE surety_releases SET amount = 15000 WHERE id = :id"), {"id": release})
    assert "amount differ from its last audit entry" in _problem(_verify(runner), "surety_releases", release)


def test_an_order_lifted_and_a_certification_reviewed_through_the_app_are_chained(signed, agent, runner):
    order = db.session.get(StopWorkOrder, signed["stop_work_orders"])
    enforcement.lift_stop_work(agent, order, "Silt fence reset and approved")
    certification = db.session.get(OMCertification, signed["om_certifications"])
    certifications.review(agent, certification, decision="accepted", note=None)
    db.session.commit()
    result = _verify(runner)
    assert result.exit_code == 0, result.output


def test_a_waiver_and_a_frozen_period_changed_outside_the_app_are_found(make, agent, runner):
    """§380-8 waivers and CGP 4.4 periods stop obligations: changed behind the app, `flask audit verify` says so."""
    permit = make.permit(construction_started_on=dt.date(2026, 6, 2))
    waiver = waivers.grant_waiver(agent, permit, "walk_through", "One house lot: seen at the final",
                                  dt.date(2026, 6, 3)).id
    period = conditions.record_frozen(agent, permit, suspended=False,
                                      starts_at=dt.datetime(2026, 6, 10, 12, tzinfo=dt.UTC), note="Ground frozen").id
    db.session.commit()
    assert _verify(runner).exit_code == 0
    with _unguarded() as connection:
        connection.execute(text("UPDATE waivers SET requirement = 'pre_construction' WHERE id = :id"), {"id": waiver})
        connection.execute(text("UPDATE frozen_periods SET suspended = true WHERE id = :id"), {"id": period})
    result = _verify(runner)
    assert "requirement differ from its last audit entry" in _problem(result, "waivers", waiver)
    assert "suspended differ from its last audit entry" in _problem(result, "frozen_periods", period)
