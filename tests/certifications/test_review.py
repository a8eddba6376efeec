"""An agent reviews a certification: accept it, or find it deficient, which sends a notice to correct (§380-14 E)."""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from sqlalchemy import select

from inspect_app.certifications.models import Easement, NoticeToCorrect, OMCertification
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail
from inspect_app.permits.services import profile_of
from tests.documents.test_documents import read


def _submitted(signed_in, owner, permit) -> OMCertification:
    response = signed_in(owner).post(f"/permits/{permit.id}/om/certify",
                                     {"cert-signer_name": "Pat Owner", "cert-agree": "y", "cert-without_entries": "y"})
    assert response.status_code == 303
    return db.session.scalars(select(OMCertification)).one()


def test_agent_accepts(make, signed_in, owner, agent, completed_permit):
    permit = completed_permit(owner)
    cert = _submitted(signed_in, owner, permit)
    browser = signed_in(agent)
    assert "Record decision" in browser.get(f"/permits/{permit.id}/om/certifications/{cert.id}").text
    response = browser.post(f"/permits/{permit.id}/om/certifications/{cert.id}/review", {"review-decision": "accepted"})
    assert response.status_code == 303
    db.session.refresh(cert)
    assert (cert.status, cert.reviewed_by_id) == ("accepted", agent.id)
    assert cert.reviewed_at is not None
    assert db.session.scalars(select(NoticeToCorrect)).all() == []
    again = browser.post(f"/permits/{permit.id}/om/certifications/{cert.id}/review",
                         {"review-decision": "deficient", "review-note": "Too late"})
    assert again.status_code == 422
    db.session.refresh(cert)
    assert cert.status == "accepted"


def test_deficient_needs_a_note(make, signed_in, owner, agent, completed_permit):
    permit = completed_permit(owner)
    cert = _submitted(signed_in, owner, permit)
    response = signed_in(agent).post(f"/permits/{permit.id}/om/certifications/{cert.id}/review",
                                     {"review-decision": "deficient", "review-note": " "})
    assert response.status_code == 422
    assert 'id="review-note-error"' in response.text and "must be corrected" in response.text
    db.session.refresh(cert)
    assert cert.status == "submitted"
    assert db.session.scalars(select(NoticeToCorrect)).all() == []


def test_deficient_issues_a_notice_with_the_cure_clock(make, signed_in, owner, agent, completed_permit):
    permit = completed_permit(owner)
    cert = _submitted(signed_in, owner, permit)
    browser = signed_in(agent)
    before = dt.datetime.now(dt.UTC)
    response = browser.post(f"/permits/{permit.id}/om/certifications/{cert.id}/review",
                            {"review-decision": "deficient", "review-note": "Basin B-1 outlet is clogged; clear it."})
    assert response.status_code == 303
    notice = db.session.scalars(select(NoticeToCorrect)).one()
    assert (notice.certification_id, notice.issued_by_id) == (cert.id, agent.id)
    assert notice.text == "Basin B-1 outlet is clogged; clear it."
    # §380-14 E: the profile's cure period (30 days in Longmeadow), to the end of that local day.
    profile = profile_of(permit)
    tz = ZoneInfo(profile.timezone)
    assert profile.cure_period.days == 30
    last_day = notice.issued_at.astimezone(tz).date() + dt.timedelta(days=profile.cure_period.days)
    assert notice.cure_due_at == dt.datetime.combine(last_day, dt.time.max, tzinfo=tz)
    assert dt.timedelta(days=30) <= notice.cure_due_at - before < dt.timedelta(days=31)

    email = db.session.scalars(select(OutboundEmail).where(OutboundEmail.subject.like("Notice to correct%"))).one()
    assert email.to == [owner.email] and email.permit_id == permit.id
    assert "Basin B-1 outlet is clogged" in email.body and f"{last_day:%B %-d, %Y}" in email.body
    # §380-14 E, in its own words: the clause and what the Town may do if the corrections are not made.
    assert (f"{last_day:%B %-d, %Y} (§380-14 E). If they are not, the Town may seek a court order or obtain other "
            "relief in order to inspect the property and ensure compliance (§380-14 E).") in " ".join(email.body.split())

    # The cure clock shows on the permit, for the owner too, until the agent marks it corrected.
    # (one test client: signing someone in signs the previous person out)
    assert "Cure by" in signed_in(owner).get(f"/permits/{permit.id}").text
    browser = signed_in(agent)
    assert "Cure by" in browser.get(f"/permits/{permit.id}").text
    cured = browser.post(f"/permits/{permit.id}/om/notices/{notice.id}/cured")
    assert cured.status_code == 303
    db.session.refresh(notice)
    assert notice.cured_at is not None and notice.cured_by_id == agent.id
    assert "Cure by" not in browser.get(f"/permits/{permit.id}").text
    assert f"marked by {agent.name}" in browser.get(f"/permits/{permit.id}/om").text

    # A deficient certification leaves its period open: the owner certifies it again.
    assert signed_in(owner).post(f"/permits/{permit.id}/om/certify",
                                 {"cert-signer_name": "Pat Owner", "cert-agree": "y",
                                  "cert-without_entries": "y"}).status_code == 303


def test_agent_sends_a_notice_without_a_certification(make, signed_in, owner, agent, completed_permit):
    permit = completed_permit(owner)
    browser = signed_in(agent)
    empty = browser.post(f"/permits/{permit.id}/om/notices", {"notice-text": ""})
    assert empty.status_code == 422 and 'id="notice-text-error"' in empty.text
    assert browser.post(f"/permits/{permit.id}/om/notices",
                        {"notice-text": "Mow the basin side slopes."}).status_code == 303
    notice = db.session.scalars(select(NoticeToCorrect)).one()
    assert notice.certification_id is None and notice.cured_at is None


def _accepted_document(browser, permit, cert: OMCertification) -> str:
    """The agent accepts the certification; the text of the document's version that the review froze."""
    assert browser.post(f"/permits/{permit.id}/om/certifications/{cert.id}/review",
                        {"review-decision": "accepted"}).status_code == 303
    db.session.expire_all()
    return read(documents.om_certification_pdf(cert))


def test_the_reviewed_certification_lists_the_easements_it_was_signed_with(make, signed_in, owner, agent,
                                                                           completed_permit):
    # §380-14 C(2)(l): the responsible party certifies the plan as it stood; an easement listed or placed on
    # the site map after signing is not put under their signature by the review's version of the document.
    permit = completed_permit(owner)
    browser = signed_in(agent)
    assert browser.post(f"/permits/{permit.id}/om/easements", {
        "easement-purpose": "Access to Basin B-1", "easement-location": "East line of Lot 4"}).status_code == 303
    cert = _submitted(signed_in, owner, permit)
    browser = signed_in(agent)
    assert browser.post(f"/permits/{permit.id}/om/easements", {
        "easement-purpose": "Flood route listed after signing", "easement-location": "Lots 5-6"}).status_code == 303
    signed_with = db.session.scalars(select(Easement).where(Easement.purpose == "Access to Basin B-1")).one()
    assert browser.post(f"/permits/{permit.id}/points", {"point-subject": f"easement:{signed_with.id}",
                                                         "point-latitude": "42.04502",
                                                         "point-longitude": "-72.57311"}).status_code == 303
    reviewed = _accepted_document(browser, permit, cert)
    assert "Accepted" in reviewed and "Access to Basin B-1 East line of Lot 4 — Not recorded" in reviewed
    assert "Flood route listed after signing" not in reviewed and "42.045020" not in reviewed


def test_the_reviewed_certification_shows_the_plan_as_it_stood_when_signed(make, signed_in, owner, agent,
                                                                           completed_permit):
    # The plan's recording printed above the signature is the one the party signed under: the plan recorded
    # afterwards does not change it in the review's version.
    permit = completed_permit(owner)
    cert = _submitted(signed_in, owner, permit)
    browser = signed_in(agent)
    assert browser.post(f"/permits/{permit.id}/om/plan", {
        "plan-estimated_annual_budget": "4800", "plan-registry_reference": "Book 25170, Page 88",
        "plan-recorded_on": "2026-10-08"}).status_code == 303
    reviewed = _accepted_document(browser, permit, cert)
    assert "Accepted" in reviewed and "Not yet recorded at the Hampden County Registry of Deeds" in reviewed
    assert "Book 25170, Page 88" not in reviewed
