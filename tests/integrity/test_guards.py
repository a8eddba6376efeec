"""The database itself refuses to change what the record has made final, to raw SQL as to the app."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from inspect_app.certifications.models import OMCertification
from inspect_app.completion.models import CertificateOfCompletion, SuretyRelease
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db


def _raw(sql: str, **params) -> None:
    """Run one statement in its own transaction, as someone at a database prompt would."""
    with db.engine.begin() as connection:
        connection.execute(text(sql), params)


def _refused(sql: str, **params) -> str:
    with pytest.raises(IntegrityError) as refused:
        _raw(sql, **params)
    return str(refused.value.orig)


@pytest.fixture
def records(make):
    agent = make.user("agent")
    permit = make.permit(areas=["Pad"])
    submitted = make.inspection(permit)
    draft = make.inspection(permit, status="draft")
    order = StopWorkOrder(permit_id=permit.id, reason="Silt fence down", issued_by_id=agent.id)
    certificate = CertificateOfCompletion(permit_id=permit.id, issued_by_id=agent.id)
    certification = OMCertification(permit_id=permit.id, period_start=dt.date(2025, 6, 1),
                                    period_end=dt.date(2026, 5, 31), signer_name="Pat Owner",
                                    statement="I certify the maintenance was done.")
    release = SuretyRelease(permit_id=permit.id, phase="Phase 1", amount=5000, released_by_id=agent.id)
    db.session.add_all([order, certificate, certification, release])
    db.session.commit()
    return {"agent": agent, "permit": permit, "submitted": submitted, "draft": draft, "order": order,
            "certificate": certificate, "certification": certification, "release": release}


def test_audit_entries_can_be_neither_changed_nor_deleted(records):
    seq = db.session.execute(text("SELECT max(seq) FROM audit_entries")).scalar()
    message = _refused("UPDATE audit_entries SET action = 'permit.delete' WHERE seq = :seq", seq=seq)
    assert "audit_entries: an audit entry is part of the record and cannot be changed" in message
    assert "cannot be deleted" in _refused("DELETE FROM audit_entries WHERE seq = :seq", seq=seq)
    assert "cannot be changed" in _refused("UPDATE audit_entries SET hash = NULL WHERE seq = :seq", seq=seq)


def test_a_submitted_report_is_refused_a_change_but_its_pending_weather_may_be_filled(records):
    submitted, draft = records["submitted"].id, records["draft"].id
    assert "a submitted inspection report is part of the record" in _refused(
        "UPDATE inspections SET inspector_name = 'Someone Else' WHERE id = :id", id=submitted)
    _refused("UPDATE inspections SET evaluation = 'violations' WHERE id = :id", id=submitted)
    _refused("UPDATE inspections SET status = 'draft' WHERE id = :id", id=submitted)
    _refused("DELETE FROM inspections WHERE id = :id", id=submitted)
    _raw("UPDATE inspections SET weather_status = 'complete', temperature_c = 18.5, precip_24h_mm = 3.2 "
         "WHERE id = :id", id=submitted)
    _raw("UPDATE inspections SET inspector_name = 'Draft Changes' WHERE id = :id", id=draft)
    values = db.session.execute(text("SELECT id, temperature_c, inspector_name FROM inspections")).all()
    assert {row.id: (row.temperature_c, row.inspector_name) for row in values} == {
        submitted: (18.5, "Test Inspector"), draft: (None, "Draft Changes")}


def test_the_weather_the_inspector_observed_is_frozen_with_the_submitted_report(records, make):
    """The observed weather is part of what the inspector signed: only the station's values may come later."""
    signed = make.inspection(records["permit"], observed_weather="Overcast, 45 °F, calm")
    message = _refused("UPDATE inspections SET observed_weather = 'Sunny and warm' WHERE id = :id", id=signed.id)
    assert "a submitted inspection report is part of the record and cannot be changed" in message
    _refused("UPDATE inspections SET observed_weather = NULL WHERE id = :id", id=signed.id)
    _raw("UPDATE inspections SET conditions = 'Fair', temperature_c = 7.0 WHERE id = :id", id=signed.id)
    _raw("UPDATE inspections SET observed_weather = 'Sunny' WHERE id = :id", id=records["draft"].id)
    rows = db.session.execute(text("SELECT id, observed_weather, conditions FROM inspections")).all()
    assert {row.id: (row.observed_weather, row.conditions) for row in rows}[signed.id] == (
        "Overcast, 45 °F, calm", "Fair")
    assert {row.id: row.observed_weather for row in rows}[records["draft"].id] == "Sunny"


def test_an_issued_order_keeps_what_it_ordered_and_is_lifted_once(records):
    order, agent = records["order"].id, records["agent"].id
    _refused("UPDATE stop_work_orders SET reason = 'Nothing' WHERE id = :id", id=order)
    _refused("UPDATE stop_work_orders SET issued_at = NULL WHERE id = :id", id=order)
    _raw("UPDATE stop_work_orders SET lifted_at = CURRENT_TIMESTAMP, lifted_by_id = :agent, "
         "lift_reason = 'Corrected and approved' WHERE id = :id", id=order, agent=agent)
    _refused("UPDATE stop_work_orders SET lift_reason = 'Another reason' WHERE id = :id", id=order)
    _refused("UPDATE stop_work_orders SET lifted_at = NULL WHERE id = :id", id=order)
    _refused("DELETE FROM stop_work_orders WHERE id = :id", id=order)


def test_a_certificate_of_completion_never_changes(records):
    certificate = records["certificate"].id
    assert "an issued certificate of completion" in _refused(
        "UPDATE certificates_of_completion SET note = 'added later' WHERE id = :id", id=certificate)
    _refused("DELETE FROM certificates_of_completion WHERE id = :id", id=certificate)


def test_a_surety_release_never_changes(records):
    release = records["release"].id
    assert "surety_releases: a surety release is part of the record and cannot be changed" in _refused(
        "UPDATE surety_releases SET amount = 20000 WHERE id = :id", id=release)
    assert "cannot be deleted" in _refused("DELETE FROM surety_releases WHERE id = :id", id=release)


def test_a_signed_certification_keeps_what_was_signed_and_is_reviewed_once(records):
    certification, agent = records["certification"].id, records["agent"].id
    _refused("UPDATE om_certifications SET signer_name = 'New Owner' WHERE id = :id", id=certification)
    _refused("UPDATE om_certifications SET statement = 'Nothing was done.' WHERE id = :id", id=certification)
    _raw("UPDATE om_certifications SET status = 'accepted', reviewed_by_id = :agent, "
         "reviewed_at = CURRENT_TIMESTAMP WHERE id = :id", id=certification, agent=agent)
    _refused("UPDATE om_certifications SET status = 'deficient' WHERE id = :id", id=certification)
    _refused("DELETE FROM om_certifications WHERE id = :id", id=certification)


def test_a_waiver_a_snowmelt_discharge_and_a_frozen_period_keep_what_was_recorded(records):
    """What stops or changes an obligation (§380-8 waiver; CGP 2022 Parts 4.2-4.4) is as final as what it stops."""
    agent, permit = records["agent"].id, records["permit"].id
    _raw("INSERT INTO waivers (id, permit_id, requirement, reason, granted_on, granted_by_id, recorded_at) VALUES "
         "('w1', :permit, 'walk_through', 'Single lot, seen at the final', '2026-05-01', :agent, CURRENT_TIMESTAMP)",
         permit=permit, agent=agent)
    assert "waivers: a granted waiver is part of the record and cannot be changed" in _refused(
        "UPDATE waivers SET reason = 'Another reason' WHERE id = 'w1'")
    assert "cannot be deleted" in _refused("DELETE FROM waivers WHERE id = 'w1'")

    _raw("INSERT INTO snowmelt_discharges (id, permit_id, discharge_at, snow_mm, seen_on_site, recorded_by_id, "
         "recorded_at) VALUES ('s1', :permit, CURRENT_TIMESTAMP, 90, true, :agent, CURRENT_TIMESTAMP)",
         permit=permit, agent=agent)
    _refused("UPDATE snowmelt_discharges SET snow_mm = 10 WHERE id = 's1'")
    _refused("DELETE FROM snowmelt_discharges WHERE id = 's1'")

    _raw("INSERT INTO frozen_periods (id, permit_id, suspended, starts_at, note, recorded_by_id, recorded_at) "
         "VALUES ('f1', :permit, false, '2026-01-05 12:00:00', 'Ground frozen', :agent, CURRENT_TIMESTAMP)",
         permit=permit, agent=agent)
    _refused("UPDATE frozen_periods SET starts_at = '2025-12-01 12:00:00' WHERE id = 'f1'")
    _raw("UPDATE frozen_periods SET ends_at = '2026-02-20 12:00:00', ended_by_id = :agent WHERE id = 'f1'",
         agent=agent)
    assert "frozen_periods: a recorded frozen-conditions period is part of the record" in _refused(
        "UPDATE frozen_periods SET ends_at = '2026-03-20 12:00:00' WHERE id = 'f1'")
    _refused("DELETE FROM frozen_periods WHERE id = 'f1'")
