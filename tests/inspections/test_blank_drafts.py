"""A tap on Start is not yet an inspection (issue 31, *Save as you go*): the draft it makes is blank until its author
keeps something in it. A blank draft owes no report, is nobody's document, and a second Start opens it again
instead of making another."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import func, select, update

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.types import LOCAL_TZ, utcnow

from factories import SignedIn
from tests.dashboard.test_dashboard import rows
from tests.dashboard.test_permit_now import answers, part
from tests.inspections.report_helpers import report_form, start


def started_permit(make, inspectors):
    """An active permit whose construction began 20 days ago."""
    today = utcnow().astimezone(LOCAL_TZ).date()
    return make.permit(issued_on=today - dt.timedelta(days=50), construction_started_on=today - dt.timedelta(days=20),
                       inspectors=inspectors)


def drafts() -> list[Inspection]:
    return list(db.session.scalars(select(Inspection).where(Inspection.status == "draft")))


def save(client, inspection_id: str, **fields):
    """Open the draft and press "Save draft" with `fields` typed in."""
    page = client.get(f"/inspections/{inspection_id}")
    assert page.status_code == 200, page.text
    response = client.post(f"/inspections/{inspection_id}", report_form(page.text)[0] | fields)
    assert response.status_code == 303, response.text
    return response


def report_rows(agent_client) -> list[str]:
    """The agent's dashboard rows for reports owed (CGP 2022 Part 4.7.1)."""
    return [r for r in rows(agent_client.get("/dashboard/").text) if "must be reported" in r or "report" in r.lower()]


def test_start_tapped_again_opens_the_same_blank_draft(make, signed_in):
    inspector = make.user("inspector")
    permit = started_permit(make, [inspector])
    client = signed_in(inspector)

    first = start(client, permit, "erosion_control")
    again = start(client, permit, "erosion_control")  # Back, then Start again

    assert again.id == first.id
    assert len(drafts()) == 1
    # Another type is another inspection.
    assert start(client, permit, "final").id != first.id
    assert len(drafts()) == 2


def test_a_blank_draft_owes_no_report_until_its_author_keeps_something(app, make, signed_in):
    inspector, agent = make.user("inspector"), make.user("agent")
    permit = started_permit(make, [inspector])
    client, town = signed_in(inspector), SignedIn(app.test_client(), agent)  # two people, two browsers
    before = report_rows(town)

    draft = start(client, permit, "erosion_control")

    assert draft.is_blank
    assert report_rows(town) == before  # no "report due in 24 hours" for a tap on Start
    assert answers(client.get(f"/permits/{permit.id}").text).get("report", []) == []

    save(client, draft.id, notes="Silt fence along the east line checked.")

    db.session.expire_all()
    assert not db.session.get(Inspection, draft.id).is_blank
    owed = [r for r in report_rows(town) if r not in before]
    assert len(owed) == 1 and "24 hours" in owed[0], owed
    assert answers(client.get(f"/permits/{permit.id}").text)["report"] == ["Finish"]
    # Kept once, never blank again: a Start now makes a new draft, the kept one stays.
    assert start(client, permit, "erosion_control").id != draft.id


def test_a_blank_draft_is_not_listed_as_a_document_until_kept(make, signed_in):
    inspector = make.user("inspector")
    permit = started_permit(make, [inspector])
    client = signed_in(inspector)
    draft = start(client, permit, "erosion_control")

    documents = part(client.get(f"/permits/{permit.id}").text, "documents")
    assert "Inspection report (draft)" not in documents

    save(client, draft.id, notes="Checked.")
    documents = part(client.get(f"/permits/{permit.id}").text, "documents")
    assert "Inspection report (draft)" in documents


def test_each_person_on_a_shared_tablet_starts_their_own_draft(make, signed_in):
    """One after the other on the same browser: the second person's Start is theirs, not the first one's draft."""
    first, second = make.user("inspector"), make.user("inspector")
    permit = started_permit(make, [first, second])

    mine = start(signed_in(first), permit, "erosion_control")
    theirs = start(signed_in(second), permit, "erosion_control")

    assert theirs.id != mine.id
    assert theirs.created_by_id == second.id and theirs.inspector_name == second.name


def test_a_blank_draft_started_hours_ago_is_not_this_visit(make, signed_in):
    inspector = make.user("inspector")
    permit = started_permit(make, [inspector])
    client = signed_in(inspector)
    old = start(client, permit, "erosion_control")
    earlier = utcnow() - dt.timedelta(hours=3)
    db.session.execute(update(Inspection).where(Inspection.id == old.id)
                       .values(created_at=earlier, performed_at=earlier))
    db.session.commit()

    new = start(client, permit, "erosion_control")

    assert new.id != old.id
    assert abs(new.performed_at - utcnow()) < dt.timedelta(minutes=5)  # this visit's time, not the old tap's
    assert db.session.get(Inspection, old.id) is not None  # nothing is thrown away on its author's behalf


def test_a_report_made_on_a_device_is_kept_by_its_first_save(make, signed_in):
    """Offline, Start makes no row: the device's first save makes the draft, which is kept, not blank."""
    inspector = make.user("inspector")
    permit = started_permit(make, [inspector])
    client = signed_in(inspector)
    page = client.get(f"/permits/{permit.id}/inspections/new/erosion_control")
    assert page.status_code == 200
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 0
    device_id = str(uuid.uuid4())
    values = report_form(page.text)[0] | {"notes": "Typed with no signal."}
    response = client.post(f"/inspections/{device_id}", values)

    assert response.status_code == 303, response.text
    made = db.session.get(Inspection, device_id)
    assert made is not None and not made.is_blank

