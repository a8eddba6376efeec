"""SPEC *Signatures*: the signer of a report is the person signed in, with the credentials stored on their
account, never a name posted with the form; an amendment by someone else says so on the report page, the
PDF and the public /verify page ("amendment by C of a report by A"); a type the town gives to a registered
PE is signed only by an account with a PE number (§380-16 C(3), C(4)(c), C(4)(e))."""
from __future__ import annotations

import datetime as dt
import io
import re
import threading

import pypdf
import pytest
from sqlalchemy import select

from factories import SignedIn
from inspect_app.documents.models import FrozenDocument
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from tests.inspections.report_helpers import error_beside, filled, start, submit

DANA = {"name": "Dana Whitfield", "pe_number": "41177", "certification": "CPESC No. 3310"}
CASEY = {"name": "Casey Cole", "pe_number": "42290", "certification": "CPESC No. 5120"}
# What the attacker of issue 29 posted with the amendment: the original signer's name and credentials.
FORGED = {"signer_name": "Dana Whitfield", "signer_credentials": "P.E. (MA) No. 41177; CPESC No. 3310"}


@pytest.fixture(autouse=True)
def _weather_kept_offline(weather_offline):
    """The weather service is unreachable: reports keep their weather pending."""


def _text(pdf: bytes) -> str:
    return " ".join(" ".join(page.extract_text() for page in pypdf.PdfReader(io.BytesIO(pdf)).pages).split())


def _plain(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def _two_engineers(app, make, **casey):
    """Dana and Casey, both assigned to one permit, each signed in on a browser of their own."""
    dana, casey = make.user("inspector", **DANA), make.user("inspector", **(CASEY | casey))
    permit = make.permit(inspectors=[dana, casey], structures=["Pipe run P-1"],
                         construction_started_on=dt.date(2026, 6, 2))
    return permit, SignedIn(app.test_client(), dana), dana, SignedIn(app.test_client(), casey), casey


def _amend(browser, original: Inspection) -> Inspection:
    response = browser.post(f"/inspections/{original.id}/amend")
    assert response.status_code == 303, response.text
    return db.session.get(Inspection, response.headers["Location"].rsplit("/", 1)[-1])


def _report_documents(subject_id: str) -> list[FrozenDocument]:
    db.session.expire_all()
    return list(db.session.scalars(select(FrozenDocument).where(FrozenDocument.subject_id == subject_id)))


def test_an_amendment_by_someone_else_is_signed_by_them_and_says_so_everywhere(app, make):
    permit, dana_browser, dana, casey_browser, casey = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original, notes="First version").status_code == 303

    amendment = _amend(casey_browser, original)
    response = submit(casey_browser, amendment, notes="Corrected version", **FORGED)
    assert response.status_code == 303, response.text

    db.session.expire_all()
    signed = db.session.get(Inspection, amendment.id)
    assert (signed.status, signed.signer_name, signed.signer_credentials) == (
        "submitted", "Casey Cole", casey.credentials)
    assert db.session.get(Inspection, original.id).signer_name == "Dana Whitfield"  # the original stands
    says = "amendment by Casey Cole of a report by Dana Whitfield"

    page = casey_browser.get(f"/inspections/{amendment.id}").text
    assert says in _plain(page)
    assert f"Signed by Casey Cole, {casey.credentials}," in _plain(page)

    (document,) = _report_documents(amendment.id)
    assert document.signed_by == "Casey Cole"
    pdf = _text(casey_browser.get(f"/documents/frozen/{document.id}.pdf").data)
    assert f"This is an {says}." in pdf
    # Dana stays the inspector of (b); Casey, who is not, appears as the one who signed.
    assert f"(b) Inspector's name and credentials Dana Whitfield, {dana.credentials}" in pdf
    assert casey.credentials in pdf

    public = app.test_client().get(f"/verify/{document.id}")  # anyone, signed out
    assert public.status_code == 200
    assert f"Signed by Casey Cole (an {says})" in _plain(public.text)


def test_an_amendment_by_the_same_person_is_not_called_someone_elses(app, make):
    permit, dana_browser, _, _, _ = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original).status_code == 303
    amendment = _amend(dana_browser, original)
    assert submit(dana_browser, amendment, notes="Corrected").status_code == 303
    (document,) = _report_documents(amendment.id)
    assert "amendment by" not in _plain(dana_browser.get(f"/inspections/{amendment.id}").text)
    assert "amendment by" not in _text(dana_browser.get(f"/documents/frozen/{document.id}.pdf").data)
    assert "amendment by" not in _plain(app.test_client().get(f"/verify/{document.id}").text)


def test_a_name_and_credentials_posted_with_a_new_report_are_not_the_signers(app, make):
    permit, _, _, casey_browser, casey = _two_engineers(app, make)
    draft = start(casey_browser, permit, "erosion_control")
    page = casey_browser.get(f"/inspections/{draft.id}").text
    assert 'name="signer_name"' not in page and 'name="signer_credentials"' not in page
    assert f"Signed by Casey Cole, {casey.credentials} (from your account)" in _plain(page)

    assert submit(casey_browser, draft, **FORGED).status_code == 303
    db.session.expire_all()
    report = db.session.get(Inspection, draft.id)
    assert (report.signer_name, report.signer_credentials) == ("Casey Cole", casey.credentials)
    (document,) = _report_documents(draft.id)
    assert document.signed_by == "Casey Cole" and "Dana Whitfield" not in _text(
        casey_browser.get(f"/documents/frozen/{document.id}.pdf").data)


def test_a_pe_type_amended_by_an_account_without_a_pe_number_is_refused_and_nothing_changes(app, make):
    """§380-16 C(4)(c): the pre-bury inspection is the engineer's, a registered PE; posting a PE's name and
    credentials with the form does not make the signer one."""
    permit, dana_browser, _, casey_browser, _ = _two_engineers(app, make, pe_number=None)
    original = start(dana_browser, permit, "pre_bury")
    assert submit(dana_browser, original).status_code == 303, "Dana is a PE: she signs the pre-bury report"
    before = _report_documents(original.id)

    amendment = _amend(casey_browser, original)
    response = submit(casey_browser, amendment, notes="Casey's correction", **FORGED)
    assert response.status_code == 422
    assert error_beside(response.text, "signer").startswith(
        "A pre-bury inspection must be signed by a registered professional engineer")
    assert "your account has no PE number" in error_beside(response.text, "signer")
    db.session.expire_all()
    kept = db.session.get(Inspection, amendment.id)
    assert (kept.status, kept.notes, kept.signed_at) == ("draft", None, None)
    assert _report_documents(amendment.id) == [] and _report_documents(original.id) == before


def test_amend_tapped_again_after_back_goes_on_with_the_same_draft(app, make):
    """Amend, Back to the report, Amend again: a second draft correcting the same report was made, and both could
    be signed and submitted. Now the second tap opens the first draft; another person's Amend makes their own."""
    permit, dana_browser, dana, casey_browser, _ = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original).status_code == 303
    first = _amend(dana_browser, original)
    dana_browser.get(f"/inspections/{original.id}")  # Back
    assert _amend(dana_browser, original).id == first.id
    assert _amend(casey_browser, original).id != first.id
    db.session.expire_all()
    drafts = db.session.scalars(select(Inspection).where(Inspection.amends_id == original.id)).all()
    assert sorted(d.created_by_id == dana.id for d in drafts) == [False, True]
    # Once submitted, Amend on it opens a new correction (of it: the original has been corrected).
    assert submit(dana_browser, first, notes="Corrected").status_code == 303
    assert dana_browser.post(f"/inspections/{original.id}/amend").status_code == 409
    again = _amend(dana_browser, first)
    assert again.amends_id == first.id and again.id not in {d.id for d in drafts}


def test_a_report_is_corrected_along_one_line_the_second_correction_begun_meanwhile_is_refused_at_signing(app, make):
    """docs/record-integrity.md: "a new version amends the one before". Dana and Casey each opened a correction of
    the same report; both could be signed, and the report had two versions, each claiming to correct it, signed
    by different people. Now the first signed stands; the other is refused at signing and stays a draft, and the
    report that has been corrected can no longer be amended: its latest version is."""
    permit, dana_browser, dana, casey_browser, casey = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original).status_code == 303
    danas, caseys = _amend(dana_browser, original), _amend(casey_browser, original)
    # While both are drafts, neither sees the other's on the report.
    page = _plain(dana_browser.get(f"/inspections/{original.id}").text)
    assert "(draft)" in page and page.count("amendment") == 1
    assert submit(casey_browser, caseys, notes="Silt fence repaired on the east side").status_code == 303

    refused = submit(dana_browser, danas, notes="Dana's correction")
    assert refused.status_code == 422
    words = _plain(refused.text)
    assert "Casey Cole submitted a correction of the report" in words
    assert "amend the latest version" in words
    db.session.expire_all()
    assert db.session.get(Inspection, danas.id).status == "draft"
    submitted = db.session.scalars(select(Inspection).where(Inspection.amends_id == original.id,
                                                            Inspection.status == "submitted")).all()
    assert [s.id for s in submitted] == [caseys.id]

    # The corrected report offers no Amend; it names its latest version, which is the one to amend.
    page = dana_browser.get(f"/inspections/{original.id}")
    assert "Amend this report" not in page.text
    assert f'href="/inspections/{caseys.id}"' in page.text
    refused = dana_browser.post(f"/inspections/{original.id}/amend")
    assert refused.status_code == 409
    assert "Casey Cole submitted a correction of the report" in _plain(refused.text)
    assert f'href="/inspections/{caseys.id}"' in refused.text
    db.session.expire_all()
    assert {i.id for i in db.session.scalars(select(Inspection).where(Inspection.amends_id == original.id))} == {
        danas.id, caseys.id}  # the refusal made nothing
    # Dana's draft says, before she fills anything more in, that it cannot be signed.
    warned = _plain(dana_browser.get(f"/inspections/{danas.id}").text)
    assert "This draft cannot be signed: Casey Cole submitted a correction of that report" in warned
    latest = _amend(dana_browser, db.session.get(Inspection, caseys.id))
    assert latest.amends_id == caseys.id and latest.notes == "Silt fence repaired on the east side"
    assert submit(dana_browser, latest, notes="Silt fence and inlet protection repaired").status_code == 303


def test_two_corrections_of_one_report_signed_at_the_same_moment_leave_one_standing(app, make):
    """Dana and Casey press Sign and submit on their corrections of one report at the same moment: each check
    "corrected since?" could see none before the other's was written. The report is locked while one is signed,
    so one stands and the other is refused as corrected meanwhile."""
    permit, dana_browser, _, casey_browser, _ = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original).status_code == 303
    drafts = [(dana_browser, _amend(dana_browser, original)), (casey_browser, _amend(casey_browser, original))]
    posts = [(browser, f"/inspections/{draft.id}/submit",
              filled(browser.get(f"/inspections/{draft.id}").text, notes="Corrected"))
             for browser, draft in drafts]
    # Each draft saved as it will be signed (autosave did): Sign then writes nothing before its check.
    for browser, url, form in posts:
        assert browser.post(url.removesuffix("/submit"), form).status_code == 303
    db.session.remove()  # the test's own session holds no read on the reports while the two sign
    gate, answers = threading.Barrier(2), [None, None]

    def sign(i: int) -> None:
        browser, url, form = posts[i]
        gate.wait()
        answers[i] = browser.post(url, form)

    threads = [threading.Thread(target=sign, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(a.status_code for a in answers) == [303, 422]
    refused = next(a for a in answers if a.status_code == 422)
    assert "submitted a correction of the report" in _plain(refused.text)
    assert len(db.session.scalars(select(Inspection).where(Inspection.amends_id == original.id,
                                                           Inspection.status == "submitted")).all()) == 1


def test_a_report_corrected_twice_sends_whoever_would_amend_it_to_the_latest_version(app, make):
    """A → B → C: A's page and its refusal linked to B, itself corrected, whose Amend is refused too."""
    permit, dana_browser, _, casey_browser, _ = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original).status_code == 303
    once = _amend(casey_browser, original)
    assert submit(casey_browser, once, notes="Corrected once").status_code == 303
    twice = _amend(dana_browser, once)
    assert submit(dana_browser, twice, notes="Corrected twice").status_code == 303
    page = dana_browser.get(f"/inspections/{original.id}").text
    assert re.search(rf'id="corrected">This report has been corrected: <a href="/inspections/{twice.id}">', page)
    refused = casey_browser.post(f"/inspections/{original.id}/amend")
    assert refused.status_code == 409 and f'id="latest-version" href="/inspections/{twice.id}"' in refused.text
    assert "corrected again since: the latest version was signed on" in _plain(refused.text)
    assert _amend(casey_browser, db.session.get(Inspection, twice.id)).amends_id == twice.id


def test_a_second_correction_by_the_same_other_person_still_says_whose_report_it_amends(app, make):
    """Dana signs; Casey corrects it ("amendment by Casey Cole of a report by Dana Whitfield"); Casey corrects
    again (a correction amends the latest version). The second correction still prints Dana as (b) the inspector
    and is signed by Casey: the page, the PDF and /verify say it is Casey's amendment of Dana's report, as the
    first did (it was compared with the version just before, Casey's own, and said nothing)."""
    permit, dana_browser, _dana, casey_browser, _casey = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original, notes="Dana's report").status_code == 303
    first = _amend(casey_browser, original)
    assert submit(casey_browser, first, notes="Casey's first correction").status_code == 303
    second = _amend(casey_browser, first)
    assert submit(casey_browser, second, notes="Casey's second correction").status_code == 303

    db.session.expire_all()
    second = db.session.get(Inspection, second.id)
    assert (second.inspector_name, second.signer_name) == ("Dana Whitfield", "Casey Cole")
    document = db.session.scalars(select(FrozenDocument).where(FrozenDocument.subject_id == second.id)).one()
    pdf = _text(casey_browser.get(f"/documents/frozen/{document.id}.pdf").data)
    assert "(b) Inspector's name and credentials Dana Whitfield" in pdf  # shown under Dana's name
    page = _plain(casey_browser.get(f"/inspections/{second.id}").text)
    public = _plain(app.test_client().get(f"/verify/{document.id}").text)
    says = "by Casey Cole of a report by Dana Whitfield"
    missing = [where for where, text in (("page", page), ("PDF", pdf), ("/verify", public)) if says not in text]
    assert not missing, f"the second correction by Casey does not say it amends Dana's report on: {missing}"


def test_the_permit_history_lists_an_amendment_by_someone_else_under_its_signer_too(app, make):
    """The inspection history, a frozen and verifiable document (docs/record-integrity.md), lists each report
    under its inspector, (b). Casey's amendment of Dana's report names Casey, who signed it, too: it was listed
    under Dana's name alone, "Submitted (amendment)"."""
    permit, dana_browser, _dana, casey_browser, _casey = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original, notes="Dana's report").status_code == 303
    amendment = _amend(casey_browser, original)
    assert submit(casey_browser, amendment, notes="Casey's correction").status_code == 303

    made = casey_browser.post(f"/documents/permits/{permit.id}/history")
    assert made.status_code == 303, made.text
    history = _text(casey_browser.get(made.headers["Location"]).data)
    assert "amendment by Casey Cole of a report by Dana Whitfield" in history, (
        "the permit history lists Casey's signed amendment of Dana's report under Dana's name only:\n" + history)


def test_the_mailed_amendment_and_the_originals_check_page_say_it_is_someone_elses(app, make, smtp_server):
    # The mail said "This report amends report <id>", a bare record id, under (b) Dana; the original's /verify said
    # only that a later version was made.
    permit, dana_browser, _, casey_browser, _ = _two_engineers(app, make)
    original = start(dana_browser, permit, "erosion_control")
    assert submit(dana_browser, original, notes="First version").status_code == 303
    amendment = _amend(casey_browser, original)
    assert submit(casey_browser, amendment, notes="Corrected version").status_code == 303
    says = "amendment by Casey Cole of a report by Dana Whitfield"
    mailed = next(part for part in smtp_server[-1].walk() if part.get_content_type() == "text/plain"
                  and not part.get_filename()).get_payload(decode=True).decode()
    assert f"It is an {says}." in mailed and original.id not in mailed
    assert "This report corrects the report of the inspection made " in mailed
    (first,) = _report_documents(original.id)[:1]
    page = _plain(app.test_client().get(f"/verify/{first.id}").text)
    assert "Amended since Yes: a later version" in page and f": an {says}." in page
