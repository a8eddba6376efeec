"""Nothing of a draft report is anyone's but its author's until it is submitted, on every path.

The draft, a finding, its corrective action and a photo are made through the app's services, each with
a word found nowhere else; every page, feed, file and document is then read by everyone else who sees
the permit, and none of those words or ids may appear.
"""
from __future__ import annotations

import io

import pytest
from pypdf import PdfReader

from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections import services as inspections

MARKS = ("Notequartz", "Findingquartz", "Actionquartz", "Captionquartz")


@pytest.fixture
def draft_site(make):
    """A permit with two engineers, an owner, the town's agent and admins; one engineer's draft report."""
    author, colleague, owner = make.user("inspector"), make.user("inspector"), make.user("permittee")
    permit = make.permit(owner=owner, inspectors=[author, colleague], areas=["Pad"])
    draft = inspections.start_inspection(author, permit, "erosion_control", fetch_weather=False)
    inspections.save_draft(author, draft, inspections.ReportInput(notes=f"{MARKS[0]} on the east slope"))
    finding = findings.add_finding(author, draft, f"{MARKS[1]} silt fence down", severity="major",
                                   is_violation=True)
    # Assigned to the owner: their own list of actions must not show it either until it is submitted.
    action = findings.open_action(author, finding, "significant_repair", f"{MARKS[2]} re-trench",
                                  owner_id=owner.id)
    db.session.commit()
    photo = make.photo(permit, inspection=draft, caption=f"{MARKS[3]} east slope")
    others = {"colleague": colleague, "owner": owner, "agent": make.user("agent"),
              "town admin": make.user("admin"), "admin of all towns": make.user("admin", town=None)}
    ids = {"inspection": draft.id, "finding": finding.id, "action": action.id, "photo": photo.id}
    return permit, author, others, ids


def _text(response) -> str:
    if response.mimetype == "application/pdf":
        return " ".join(page.extract_text() for page in PdfReader(io.BytesIO(response.data)).pages)
    return response.get_data(as_text=True)


def _status(browser, url: str) -> int:
    response = browser.get(url)
    response.close()  # a file sent is closed by the server once read
    return response.status_code


def _leaks(text: str, ids: dict[str, str]) -> list[str]:
    return [w for w in (*MARKS, *ids.values()) if w in text]


def test_nobody_but_the_author_sees_anything_of_a_draft(draft_site, signed_in):
    permit, author, others, ids = draft_site
    p = permit.id
    lists = [f"/permits/{p}", f"/permits/{p}/photos", f"/permits/{p}/timeline", f"/permits/{p}/completion/",
             f"/permits/{p}/stop-work/new", "/permits/", "/dashboard/", "/dashboard/my-day", "/dashboard/permits.csv",
             "/dashboard/permits.geojson", "/my-permits", "/offline/pages.json", "/sync/changes", "/sync/conflicts",
             f"/sync/permits/{p}/snapshot"]
    records = [f"/inspections/{ids['inspection']}", f"/inspections/{ids['inspection']}/signature.png",
               f"/documents/inspections/{ids['inspection']}.pdf",
               *(f"/photos/{ids['photo']}/{kind}" for kind in ("original", "display", "thumb")),
               f"/permits/{p}/photos/add?inspection_id={ids['inspection']}",
               f"/permits/{p}/photos/add?finding_id={ids['finding']}",
               f"/permits/{p}/photos/add?corrective_action_id={ids['action']}"]
    tried = 0
    for who, user in others.items():
        browser = signed_in(user)
        for url in lists:
            response = browser.get(url)
            assert response.status_code < 500, (who, url)
            assert _leaks(_text(response), ids) == [], (who, url)
            tried += 1
        # The permit's history, made for them (a POST: it registers the document), then downloaded.
        history = browser.post(f"/documents/permits/{p}/history", follow_redirects=True)
        assert history.status_code < 500 and _leaks(_text(history), ids) == [], (who, "history")
        for url in records:
            assert _status(browser, url) in (403, 404), (who, url)
            tried += 1
    assert tried == len(others) * (len(lists) + len(records))

    # The author sees the draft, its photo and its changes.
    browser = signed_in(author)
    assert MARKS[0] in browser.get(f"/inspections/{ids['inspection']}").text
    assert _status(browser, f"/photos/{ids['photo']}/display") == 200
    assert ids["finding"] in {c["entity_id"] for c in browser.get("/sync/changes").json["changes"]}


def test_once_submitted_the_report_is_everyones_who_sees_the_permit(draft_site, signed_in):
    permit, author, others, ids = draft_site
    from inspect_app.inspections.models import Inspection

    report = db.session.get(Inspection, ids["inspection"])
    report.status, report.submitted_at = "submitted", report.performed_at
    db.session.commit()
    owner = signed_in(others["owner"])
    assert _status(owner, f"/photos/{ids['photo']}/display") == 200
    assert MARKS[0] in owner.get(f"/inspections/{ids['inspection']}").text
    snapshot = owner.get(f"/sync/permits/{permit.id}/snapshot").json
    assert ids["finding"] in {f["id"] for f in snapshot["findings"]}
    assert ids["action"] in {a["id"] for a in snapshot["corrective_actions"]}


def test_what_was_typed_in_a_draft_stays_its_authors_once_a_part_of_it_or_the_draft_is_removed(make, client,
                                                                                             signed_in):
    """A finding taken off a draft, then the draft discarded: their entries were no longer those of a draft part
    (the rows were gone), and /sync/changes gave everyone who sees the permit what had been typed in them."""
    author, owner = make.user("inspector"), make.user("permittee")
    permit = make.permit(owner=owner, inspectors=[author])
    draft = inspections.start_inspection(author, permit, "erosion_control", fetch_weather=False)
    inspections.save_draft(author, draft, inspections.ReportInput(notes=f"{MARKS[0]} foreman on site"))
    finding = findings.add_finding(author, draft, f"{MARKS[1]} dumping behind lot 4")
    db.session.commit()
    findings.remove_finding(author, finding)
    db.session.commit()
    feed = lambda browser: " ".join(str(c) for c in browser.get("/sync/changes").json["changes"])  # noqa: E731
    assert _leaks(feed(signed_in(owner)), {}) == []
    draft_id = draft.id
    discard = signed_in(author).post(f"/inspections/{draft_id}/discard", {"confirm": "yes"})
    db.session.expire_all()
    assert discard.status_code in (200, 303) and db.session.get(type(draft), draft_id) is None
    for who in (owner, make.user("agent"), make.user("inspector")):
        assert _leaks(feed(signed_in(who)), {"draft": draft_id}) == [], who.role
    # Its author's devices still learn all of it, the removal too.
    mine = signed_in(author).get("/sync/changes").json["changes"]
    assert {"finding.create", "finding.delete", "inspection.delete"} <= {c["action"] for c in mine}
