"""The certificate of completion waits for the walk-through's punch list: it was issued with an item still open.

Longmeadow §380-16 C(4)(d): "Walk-through inspection: to determine final punch list of items remaining."
§380-16 C(4)(e)[1]: "When all work, including construction of stormwater management facilities and landscaping, has
been completed, a final inspection of the project site shall be performed". §380-18: the letter certifying
completion issues "upon otherwise determining that all work of the permit has been satisfactorily completed".
Southborough §5.0 (Certificate of Completion): "issued ... after all construction activities have been completed".

An item the walk-through left that no final inspection resolved is work remaining: the certificate must wait.
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import select

from inspect_app.completion import services as completion
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, PunchListItem
from inspect_app.inspections import queries

UTC = dt.UTC
PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def _at(month: int, day: int) -> dt.datetime:
    return dt.datetime(2026, month, day, 14, 0, tzinfo=UTC)


@pytest.mark.parametrize("town", ["longmeadow", "southborough"])
def test_an_open_punch_list_item_blocks_the_certificate(town, make):
    owner, engineer = make.user("permittee"), make.user("inspector")
    agent = make.user("agent", town=town)
    permit = make.permit(town, owner=owner, inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2),
                         surety_amount=Decimal("10000.00"))
    make.inspection(permit, "initial", inspector=engineer, performed_at=_at(5, 20))
    make.inspection(permit, "erosion_control", inspector=engineer, performed_at=_at(6, 1))
    make.inspection(permit, "walk_through", inspector=engineer, performed_at=_at(9, 1))
    final = make.inspection(permit, "final", inspector=engineer, performed_at=_at(9, 15))
    if town == "southborough":  # §9.6: the NPDES notice of termination (1.5 acres: a filing was required)
        db.session.add(ChecklistAnswer(inspection_id=final.id, item_key="npdes_notice_of_termination", answer="yes"))
    # A second walk-through after the final leaves an item of work remaining.
    walk = make.inspection(permit, "walk_through", inspector=engineer, performed_at=_at(9, 20))
    db.session.add(PunchListItem(permit_id=permit.id, walk_through_id=walk.id,
                                 description="Loam and seed the basin side slopes"))
    db.session.commit()
    assert [p.description for p in queries.open_punch_items(permit)] == ["Loam and seed the basin side slopes"]

    for kind in completion.permits.profile_of(permit).completion.submissions:
        completion.submit(engineer, permit, kind, pdf=PDF, registry_reference="Book 1, Page 2", pe_certified=True,
                          inspection=final if kind == "final_report" else None)
    for submission in db.session.scalars(select(FinalSubmission)):
        completion.review(agent, submission, "accepted")
    db.session.commit()

    with pytest.raises(completion.CompletionError) as refused:
        completion.issue_certificate(agent, permit)
    assert "Punch-list items no final inspection has resolved: Loam and seed the basin side slopes." in str(
        refused.value)
    db.session.rollback()
    assert db.session.scalars(select(CertificateOfCompletion)).all() == []
