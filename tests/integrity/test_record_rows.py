"""`flask audit verify` checks each signed or issued record against what its audit entries say: a row changed
with its trigger dropped (an attacker with the database password) is found, on SQLite and PostgreSQL."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select

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


def test_records_made_through_the_app_match_their_log(signed, runner):
    result = _verify(runner)
    assert result.exit_code == 0, result.output
    checked = int(result.output.splitlines()[1].split()[0])
    assert checked >= len(signed) + 2  # and the documents of the report and of the certification
    assert "signed or issued records match their audit entries" in result.output


@pytest.mark.parametrize(("table", "change", "column"), [
    ("inspections", "notes = 'Everything was fine'", "notes"),
    ("inspections", "performed_at = '2020-01-01 09:00:00'", "performed_at"),
    ("stop_work_orders", "reason = 'Nothing at all'", "reason"),
    ("om_certifications", "signer_name = 'New Owner'", "signer_name"),
    ("documents", "signed_by = 'Someone Else'", "signed_by"),
])
def test_a_row_changed_with_its_trigger_dropped_is_found(signed, runner, table, change, column):
    with _unguarded() as connection:
        connection.exec_driver_sql(f"UPDATE {table} SET {change} WHERE id = '{signed[table]}'")
    result = _verify(runner)
    assert result.exit_code == 1
    assert f"{table} {signed[table]}: {column} differ from its last audit entry" in result.output
