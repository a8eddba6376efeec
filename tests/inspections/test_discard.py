"""A draft its author no longer wants is discarded, after a tick that says they mean it (issue 31: every Start made
a permanent draft, owed "report due in 24 h" on the agent's dashboard and was listed under Documents). What the
record relies on is never thrown away: a submitted report, or a draft something else names."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from inspect_app.audit.models import AuditEntry
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, Inspection
from inspect_app.schedule.models import PermitObligation
from tests.integrity.test_audit_chain import _verify
from tests.inspections.report_helpers import error_beside, report_form, save_with_finding, start, submit

CONFIRM = "Tick the box to confirm: the draft and everything typed in it are thrown away."


@pytest.fixture(autouse=True)
def _weather_kept_offline(weather_offline):
    """The weather service is unreachable: reports keep their weather pending."""


@pytest.fixture
def site(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    return inspector, permit, signed_in(inspector)


def _owed_for(report_id: str) -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(PermitObligation)
                             .where(PermitObligation.subject == f"inspection:{report_id}"))


def test_a_draft_started_by_mistake_is_discarded_once_confirmed_and_owes_nothing_after(site, runner):
    _, permit, browser = site
    draft = start(browser, permit, "erosion_control")
    draft_id = draft.id
    assert _owed_for(draft_id) == 0  # a tap on Start owes nothing yet (test_blank_drafts.py)
    page = browser.get(f"/inspections/{draft_id}").text
    assert browser.post(f"/inspections/{draft_id}", report_form(page)[0] | {"notes": "Wrong permit."}).status_code == 303
    assert _owed_for(draft_id) == 1  # kept once: the report of the inspection it says was made is due in 24 h
    assert "Discard this draft" in browser.get(f"/inspections/{draft_id}").text

    unconfirmed = browser.post(f"/inspections/{draft_id}/discard", {})
    assert unconfirmed.status_code == 422 and error_beside(unconfirmed.text, "discard") == CONFIRM
    assert db.session.get(Inspection, draft_id) is not None

    discarded = browser.post(f"/inspections/{draft_id}/discard", {"confirm": "yes"})
    assert discarded.status_code == 303 and discarded.headers["Location"].endswith(f"/permits/{permit.id}")
    db.session.expire_all()
    assert db.session.get(Inspection, draft_id) is None
    assert db.session.scalar(select(func.count()).select_from(ChecklistAnswer)
                             .where(ChecklistAnswer.inspection_id == draft_id)) == 0
    assert _owed_for(draft_id) == 0
    page = browser.get(f"/permits/{permit.id}").text
    assert "The draft was discarded" in page and draft_id not in page
    assert browser.get(f"/inspections/{draft_id}").status_code == 404
    assert db.session.scalars(select(AuditEntry.action).where(AuditEntry.entity_id == draft_id)
                              .order_by(AuditEntry.seq)).all()[-1] == "inspection.delete"
    checked = _verify(runner)  # the chain and every final record still check out
    assert checked.exit_code == 0, checked.output


def test_a_submitted_report_and_a_draft_with_a_finding_are_kept(site):
    _, permit, browser = site
    report = start(browser, permit, "erosion_control")
    assert submit(browser, report).status_code == 303
    refused = browser.post(f"/inspections/{report.id}/discard", {"confirm": "yes"})
    assert refused.status_code == 403
    db.session.expire_all()
    assert db.session.get(Inspection, report.id).status == "submitted"

    draft = start(browser, permit, "erosion_control")
    assert save_with_finding(browser, draft, "Silt fence down").status_code == 303
    kept = browser.post(f"/inspections/{draft.id}/discard", {"confirm": "yes"})
    assert kept.status_code == 422
    assert "already has findings recorded on it" in error_beside(kept.text, "discard")
    assert db.session.get(Inspection, draft.id) is not None


def test_only_its_author_can_discard_a_draft(make, signed_in):
    author, colleague = make.user("inspector"), make.user("inspector")
    permit = make.permit(inspectors=[author, colleague], areas=["Lot 1"])
    draft = start(signed_in(author), permit, "erosion_control")
    assert signed_in(colleague).post(f"/inspections/{draft.id}/discard", {"confirm": "yes"}).status_code == 404
    db.session.expire_all()
    assert db.session.get(Inspection, draft.id) is not None
