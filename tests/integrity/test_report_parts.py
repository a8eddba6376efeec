"""The parts of a signed report kept in rows of their own (its checklist answers, findings and their corrective
actions, photos, punch list, videos) are sealed at signing with a hash of their own (`parts_sha256`): a change made
to them straight in the database, which the report's guard does not see, is named by `flask audit verify`; the
hash itself is written once."""
from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import IntegrityError

from inspect_app.extensions import db
from inspect_app.inspections.models import Finding, Inspection
from tests.inspections.report_helpers import save_with_finding, start, submit


@pytest.fixture(autouse=True)
def _weather_kept_offline(weather_offline):
    """The weather service is unreachable: reports keep their weather pending."""


def _raw(sql: str, **params) -> None:
    """One statement in its own transaction, guards in place, as at a database prompt."""
    db.session.remove()
    with db.engine.begin() as connection:
        connection.execute(text(sql), params)


def _verify(runner):
    db.session.remove()
    return runner.invoke(args=["audit", "verify"])


@pytest.fixture
def signed_report(make, signed_in):
    """An erosion-control report with a violation finding and its corrective action, signed through the app."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad"], construction_started_on=dt.date(2026, 6, 2))
    browser = signed_in(inspector)
    report = start(browser, permit, "erosion_control")
    assert save_with_finding(browser, report, "Silt fence down along the brook", severity="major",
                             is_violation="y").status_code in (200, 303)
    response = submit(browser, report, evaluation="violations", corrective_steps="Re-trench the silt fence")
    assert response.status_code == 303, response.text
    db.session.expire_all()
    report = db.session.get(Inspection, report.id)
    assert report.status == "submitted" and report.answers and report.parts_sha256
    return browser, report


def _named(result, report) -> bool:
    return result.exit_code == 1 and f"inspections {report.id}: the answers, findings, photos" in result.output


def test_an_untouched_signed_report_verifies(signed_report, runner):
    _browser, _report = signed_report
    result = _verify(runner)
    assert result.exit_code == 0, result.output
    assert "1 submitted reports hold the answers, findings and photos they were signed with" in result.output


def test_a_signed_checklist_answer_changed_in_the_database_is_named(signed_report, runner):
    _browser, report = signed_report
    _raw("UPDATE checklist_answers SET answer = 'no', note = 'added later' WHERE id = :id", id=report.answers[0].id)
    assert _named(_verify(runner), report)


def test_a_signed_finding_rewritten_in_the_database_is_named(signed_report, runner):
    browser, report = signed_report
    finding = db.session.scalars(select(Finding).where(Finding.inspection_id == report.id)).one()
    _raw("UPDATE findings SET description = 'Minor: a little dust', is_violation = :no, severity = 'minor' "
         "WHERE id = :id", id=finding.id, no=False)
    assert "a little dust" in browser.get(f"/inspections/{report.id}").text  # what the page now shows
    assert _named(_verify(runner), report)


def test_a_signed_finding_and_its_actions_deleted_in_the_database_are_named(signed_report, runner):
    _browser, report = signed_report
    finding = db.session.scalars(select(Finding).where(Finding.inspection_id == report.id)).one()
    _raw("DELETE FROM corrective_actions WHERE finding_id = :id", id=finding.id)
    _raw("DELETE FROM findings WHERE id = :id", id=finding.id)
    assert _named(_verify(runner), report)


def test_the_parts_hash_of_a_signed_report_is_written_once(signed_report):
    _browser, report = signed_report
    with pytest.raises(IntegrityError):
        _raw("UPDATE inspections SET parts_sha256 = :forged WHERE id = :id", forged="0" * 64, id=report.id)


def test_a_signature_image_swapped_in_the_file_store_is_never_shown_as_the_signature(signed_report, runner):
    """The drawn signature is kept as a file named by its SHA-256: another PNG put in its place on disk is not
    served as the inspector's signature, nor drawn on a new version of the PDF, and `flask audit verify` names it."""
    import hashlib

    from inspect_app.blobs import files
    from inspect_app.documents.builder import SignatureBlock
    from inspect_app.documents.reports import inspection_report
    from tests.builders import signature_png

    def drawn(report) -> list[bytes | None]:
        """The signature each signature block of the report's next PDF version would draw."""
        return [b.signature_png for b in inspection_report(report).blocks if isinstance(b, SignatureBlock)]

    browser, report = signed_report
    sha = report.signature_sha256
    assert browser.get(f"/inspections/{report.id}/signature.png").status_code == 200
    assert any(drawn(report))
    assert _verify(runner).exit_code == 0
    forged = signature_png(7)
    assert hashlib.sha256(forged).hexdigest() != sha
    files.blob_store().path(sha).write_bytes(forged)

    served = browser.get(f"/inspections/{report.id}/signature.png")
    assert served.status_code == 409 and forged not in served.data
    assert "not the one signed" in served.text
    db.session.expire_all()
    assert not any(drawn(db.session.get(Inspection, report.id)))  # a blank line to sign, not the forged one
    result = _verify(runner)
    assert result.exit_code == 1
    assert f"inspections {report.id}: its drawn signature {sha} was changed in the file store" in result.output
