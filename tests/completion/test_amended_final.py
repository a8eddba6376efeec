"""A final inspection corrected (amended) to find violations no longer serves as the final inspection report the
certificate of completion rests on (it did: offered, accepted, and the certificate issued on it).

Longmeadow §380-18: "Final submissions must include the: ... C. Final inspection report as specified in § 380-16."
§380-16 C(4)(e)[3]: "If the Engineer finds the system to be properly installed and functioning, he/she shall provide
certification to the DPW Director." SPEC *The record*: "a correction is an amendment that points at what it corrects".

Once the engineer's own correction of the final says the work is *not* compliant, the corrected version is no longer
the report of a system "properly installed and functioning": it cannot be filed as the final inspection report, and
a certificate must not be issued on it.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import select

from inspect_app.completion import services as completion
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission
from inspect_app.extensions import db
from inspect_app.inspections.models import Finding

UTC = dt.UTC
PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def _at(month: int, day: int) -> dt.datetime:
    return dt.datetime(2026, month, day, 14, 0, tzinfo=UTC)


@pytest.fixture
def site(make):
    owner, engineer, agent = make.user("permittee"), make.user("inspector"), make.user("agent")
    permit = make.permit(owner=owner, inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2),
                         surety_amount=Decimal("10000.00"))
    make.inspection(permit, "initial", inspector=engineer, performed_at=_at(5, 20))
    make.inspection(permit, "erosion_control", inspector=engineer, performed_at=_at(6, 1))
    make.inspection(permit, "walk_through", inspector=engineer, performed_at=_at(9, 1))
    final = make.inspection(permit, "final", inspector=engineer, performed_at=_at(9, 15))
    return {"permit": permit, "engineer": engineer, "agent": agent, "final": final}


def _correct_to_violations(make, site):
    """The engineer's signed correction of the final: the pipe video was never made, the work is not compliant.
    (Its finding was later corrected, so no other gate stands in the way.)"""
    original = site["final"]
    correction = make.inspection(site["permit"], "final", inspector=site["engineer"], evaluation="violations",
                                 performed_at=original.performed_at, amends_id=original.id)
    db.session.add(Finding(permit_id=site["permit"].id, inspection_id=correction.id, is_violation=True,
                           description="No video inspection of pipe run P-1", status="corrected"))
    db.session.commit()
    return correction


def test_a_final_corrected_to_violations_is_not_offered_as_the_final_report(make, site):
    _correct_to_violations(make, site)
    assert site["final"] not in completion.final_inspections(site["permit"])
    with pytest.raises(completion.CompletionError) as refused:
        completion.submit(site["engineer"], site["permit"], "final_report", inspection=site["final"])
    assert "that found the work compliant" in str(refused.value)


def test_no_certificate_on_a_final_report_corrected_to_violations_after_it_was_accepted(make, site):
    permit, engineer, agent = site["permit"], site["engineer"], site["agent"]
    for kind in ("om_plan", "as_built"):
        completion.submit(engineer, permit, kind, pdf=PDF, registry_reference="Book 1, Page 2", pe_certified=True)
    completion.submit(engineer, permit, "final_report", inspection=site["final"])
    for submission in db.session.scalars(select(FinalSubmission)):
        completion.review(agent, submission, "accepted")
    db.session.commit()
    _correct_to_violations(make, site)

    with pytest.raises(completion.CompletionError) as refused:
        completion.issue_certificate(agent, permit)
    assert "The final inspection report accepted was corrected since it was accepted" in str(refused.value)
    db.session.rollback()
    assert db.session.scalars(select(CertificateOfCompletion)).all() == []
