"""`flask audit verify` checks each signed or issued record against what its audit entries say: a row changed
with its trigger dropped (an attacker with the database password) is found, on SQLite and PostgreSQL."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, text

from inspect_app.certifications.models import OMCertification
from inspect_app.documents.models import FrozenDocument
from inspect_app.enforcement import services as enforcement
from inspect_app.extensions import db
from tests.inspections.report_helpers import start, submit
from tests.integrity.test_audit_chain import _unguarded, _verify


@pytest.fixture
def signed(make, signed_in, completed_permit):
    """A report submitted, a stop-work order issued, an O&M certification signed: each through the app."""
    inspector, agent, owner = make.user("inspector"), make.user("agent"), make.user("permittee")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    report = start(browser, permit, "erosion_control")
    assert submit(browser, report, notes="Silt fence holding").status_code == 303
    order = enforcement.issue_stop_work(agent, permit, "Silt fence down along the brook")
    db.session.commit()
    done = completed_permit(owner)
    certifying = signed_in(owner)
    certifying.post(f"/permits/{done.id}/om/certify", {"cert-signer_name": "Pat Owner", "cert-agree": "y"})
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
