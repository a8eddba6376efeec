"""The certificate of completion states what the town's text says it states. Southborough §5.0, CERTIFICATE OF
COMPLETION: "A document issued by the Conservation Commission ... which states that all conditions of an issued SMP
have been met and that a project has been completed in compliance with the conditions set forth in a SMP." It
printed Longmeadow's §380-18 letter ("all work ... satisfactorily completed"), which never names the SMP's conditions.
"""
from __future__ import annotations

import datetime as dt
import io
import re

from pypdf import PdfReader
from sqlalchemy import select

from inspect_app.completion import services as completion
from inspect_app.completion.models import FinalSubmission
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer

PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def _read(pdf: bytes) -> str:
    return re.sub(r"\s+", " ", " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages))


def test_southboroughs_certificate_states_that_all_conditions_of_the_smp_were_met(make):
    engineer, agent = make.user("inspector"), make.user("agent", town="southborough")
    permit = make.permit("southborough", owner=make.user("permittee"), inspectors=[engineer],
                         construction_started_on=dt.date(2026, 6, 2))
    final = make.inspection(permit, "final", inspector=engineer)
    db.session.add(ChecklistAnswer(inspection_id=final.id, item_key="npdes_notice_of_termination", answer="yes"))
    db.session.commit()
    completion.submit(engineer, permit, "as_built", pdf=PDF, pe_certified=True)
    completion.submit(engineer, permit, "final_report", inspection=final)
    for submission in db.session.scalars(select(FinalSubmission)):
        completion.review(agent, submission, "accepted")
    waivers = {m.key: "Made on paper; Commission file 2026-3." for m in completion.inspections_not_made(permit)}
    completion.issue_certificate(agent, permit, waivers=waivers)
    db.session.commit()

    text = _read(documents.certificate_pdf(permit))
    assert "Conservation Commission" in text
    assert ("The Conservation Commission certifies that all conditions of Stormwater Management Permit "
            f"{permit.number} for {permit.site_address} have been met, and that the project has been completed in "
            "compliance with the conditions set forth in it (§5.0)") in text, text[:900]


def test_a_profile_statement_that_fills_in_an_unknown_word_is_refused():
    import pytest

    from inspect_app.profiles.schema import CompletionRule

    with pytest.raises(ValueError, match="only {number}, {site} and {regulation} may be filled in"):
        CompletionRule(citation="§1", easements_citation="§2", certificate_statement="all work of {permit} is done")
