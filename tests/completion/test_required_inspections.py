"""A certificate of completion cannot hide missed inspections: a required inspection never made (§380-16 C(4)(a) initial,
C(4)(b)[1] before construction, C(4)(c) pre-bury of each underground structure, C(4)(d) walk-through, C(4)(e)
final) blocks it unless the agent waives it with the reason the certificate prints (§380-8 A); the periodic
inspections missed are listed in its record."""
from __future__ import annotations

import datetime as dt
import io
import re
from decimal import Decimal

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select

from inspect_app.completion import services as completion
from inspect_app.completion.models import CertificateOfCompletion, FinalSubmission
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Inspection
from inspect_app.schedule import missed
from inspect_app.types import utcnow

UTC = dt.UTC
PDF = b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"


def _read(pdf: bytes) -> str:
    return re.sub(r"\s+", " ", " ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages))


@pytest.fixture
def site(make):
    """A Longmeadow permit, started June 2, 2026, with an underground pipe run, a compliant final inspection and
    all three final submissions accepted: only its inspections stand between it and the certificate."""
    owner, engineer, agent = make.user("permittee"), make.user("inspector"), make.user("agent", name="Sam Okafor")
    permit = make.permit(owner=owner, inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2),
                         structures=["Pipe run P-1"], surety_amount=Decimal("10000.00"))
    final = make.inspection(permit, "final", inspector=engineer)
    for kind in ("om_plan", "as_built"):
        completion.submit(engineer, permit, kind, pdf=PDF, registry_reference="Book 25391, Page 112",
                          pe_certified=True)
    completion.submit(engineer, permit, "final_report", inspection=final)
    for submission in db.session.scalars(select(FinalSubmission)):
        completion.review(agent, submission, "accepted")
    db.session.commit()
    return {"permit": permit, "engineer": engineer, "agent": agent, "final": final}


def _issue(browser, site, waive: dict[str, str] | None = None, ticked: list[str] | None = None):
    data = {"certificate-note": "", "certificate-waive": ticked if ticked is not None else list(waive or {})}
    data |= {f"certificate-waive-{key}-reason": reason for key, reason in (waive or {}).items()}
    return browser.post(f"/permits/{site['permit'].id}/completion/certificate", data)


def _certificates() -> int:
    return db.session.scalar(select(func.count()).select_from(CertificateOfCompletion))


def test_required_inspections_never_made_block_the_certificate_until_each_is_waived_with_its_reason(
        site, signed_in):
    """§380-16 C(4): "At a minimum, inspections ... shall be performed": the initial site inspection
    (§380-16 C(4)(a)), the controls before the start of construction (§380-16 C(4)(b)[1]), a pre-bury inspection
    of each underground structure (§380-16 C(4)(c)) and the walk-through (§380-16 C(4)(d)); the final was made."""
    pipe = site["permit"].structures[0]
    agent = signed_in(site["agent"])
    page = agent.get(f"/permits/{site['permit'].id}/completion/").text
    for words in ("Waive: Initial site inspection", "Waive: Erosion control inspection before construction started",
                  "Waive: Pre-bury inspection of Pipe run P-1", "Waive: Walk-through inspection"):
        assert words in page, words
    assert "Waive: Final inspection" not in page

    refused = _issue(agent, site)
    assert refused.status_code == 422
    text = refused.text.replace("&#39;", "'")
    assert ("Required inspections never made: Initial site inspection (§380-16 C(4)(a)); Erosion control inspection "
            "before construction started (§380-16 C(4)(b)); Pre-bury inspection of Pipe run P-1 (§380-16 C(4)(c)); "
            "Walk-through inspection (§380-16 C(4)(d)). Each blocks the certificate of completion unless the DPW "
            "Director waives it (§380-8 A), with the reason the certificate prints.") in text
    keys = ["initial", "pre_construction", f"pre_bury:{pipe.id}", "walk_through"]
    reasons = {"initial": "Made on paper before the permit was entered; file 2026-14 at the DPW.",
               "pre_construction": "Controls seen installed by the DPW on June 1, 2026 (photo log).",
               f"pre_bury:{pipe.id}": "Pipe run P-1 exposed and inspected at the final, video of Oct 2, 2026.",
               "walk_through": "Punch list settled at the final inspection."}
    unreasoned = _issue(agent, site, reasons | {"walk_through": " "})
    assert unreasoned.status_code == 422 and "Give the reason for waiving: Walk-through inspection" in unreasoned.text
    assert "Made on paper before the permit was entered" in unreasoned.text  # the form keeps what was typed
    one_left = _issue(agent, site, reasons, ticked=keys[:3])
    assert one_left.status_code == 422 and "Required inspections never made: Walk-through inspection" in one_left.text
    assert _certificates() == 0 and db.session.get(type(site["permit"]), site["permit"].id).status != "completed"

    assert _issue(agent, site, reasons).status_code == 303
    certificate = db.session.scalars(select(CertificateOfCompletion)).one()
    assert [(w["key"], w["reason"]) for w in certificate.contents["waived"]] == [(k, reasons[k]) for k in keys]
    text = _read(documents.certificate_pdf(site["permit"]))
    assert "Required inspections waived (§380-8 A)" in text
    for reason in reasons.values():
        assert reason in text
    assert "Waived by Sam Okafor, for the DPW Director, in issuing this certificate." in text


def test_the_periodic_inspections_missed_are_listed_in_the_certificates_record(site, make, signed_in):
    """CGP 2022 Part 4.2, adopted by §380-16 C(4)(b)[1]: an erosion-control inspection at least every 7 days. Every
    one missed (here: none made after construction started) is on the certificate, each with its deadline."""
    permit, engineer = site["permit"], site["engineer"]
    pipe = permit.structures[0]
    make.inspection(permit, "initial", inspector=engineer, performed_at=dt.datetime(2026, 5, 20, 14, tzinfo=UTC))
    make.inspection(permit, "erosion_control", inspector=engineer,
                    performed_at=dt.datetime(2026, 6, 1, 14, tzinfo=UTC))
    make.inspection(permit, "walk_through", inspector=engineer)
    make.inspection(permit, "pre_bury", inspector=engineer, performed_at=dt.datetime(2026, 7, 1, 14, tzinfo=UTC))
    pre_bury = db.session.scalar(select(Inspection).where(Inspection.type == "pre_bury"))
    db.session.add(ChecklistAnswer(inspection_id=pre_bury.id, item_key="size_as_designed", subject_id=pipe.id,
                                   answer="yes"))
    db.session.commit()
    assert completion.inspections_not_made(permit) == []
    late = [m for m in missed.missed_inspections(permit, utcnow()) if m.key == "inspection"]
    assert len(late) >= 20 and all(m.made_at is None for m in late)  # June 2026 to now, none made

    assert _issue(signed_in(site["agent"]), site).status_code == 303
    certificate = db.session.scalars(select(CertificateOfCompletion)).one()
    assert certificate.contents["waived"] == []
    recorded = [m for m in certificate.contents["missed"] if m["key"] == "inspection"]
    assert len(recorded) >= len(late)
    text = _read(documents.certificate_pdf(permit))
    assert "Required inspections waived (§380-8 A) Inspection Required by Reason for the waiver None" in text
    assert "Inspections missed" in text
    assert text.count("Never made") >= len(late)
    assert "Jun 9, 2026 11:59 PM EDT" in text  # the first: 7 days after construction started


def test_an_initial_site_inspection_made_after_the_plan_was_approved_is_not_the_one_required(make):
    """§380-16 C(4)(a): "Initial Site Inspection: prior to approval of any plan." One made after the permit was issued
    counted as the initial inspection required: the certificate's record showed the requirement met."""
    from inspect_app.types import LOCAL_TZ

    late, in_time = (make.permit(issued_on=dt.date(2026, 6, 1), construction_started_on=dt.date(2026, 6, 15))
                     for _ in range(2))
    make.inspection(late, "initial", performed_at=dt.datetime(2026, 6, 20, 10, tzinfo=LOCAL_TZ))
    make.inspection(in_time, "initial", performed_at=dt.datetime(2026, 6, 1, 9, tzinfo=LOCAL_TZ))  # the day approved
    assert "initial" in [m.key for m in completion.inspections_not_made(late)]
    assert "initial" not in [m.key for m in completion.inspections_not_made(in_time)]
