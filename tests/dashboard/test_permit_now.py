"""The permit page's first part, *What to do now*: the stored obligations of the permit, most pressing
first, each with its due time, reason and citation, and the action that answers it for who may take it."""
from __future__ import annotations

import datetime as dt
import re
from html import unescape

from inspect_app.accounts.policy import ACTIONS
from inspect_app.labels import OBLIGATION_KIND_LABELS
from inspect_app.extensions import db
from inspect_app.inspections.models import INSPECTION_TYPES, Inspection
from inspect_app.pages.now import ANSWERS
from inspect_app.types import LOCAL_TZ

from tests.dashboard.test_dashboard import started_permit


def part(page: str, element_id: str) -> str:
    """The HTML of the page's section with this id."""
    return page.split(f'id="{element_id}"', 1)[1].split("</section>", 1)[0]


def text(html: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def now_items(page: str) -> list[str]:
    """The text of each item of *What to do now*, in page order."""
    return [text(item.split(">", 1)[1]) for item in part(page, "now").split("<li")[1:]]


def busy_site(make, record, **people):
    """A 14-day-and-storm site with an overdue stabilization, a storm inspection due, a routine inspection
    due later and the walk-through still to come."""
    permit = started_permit(make, record, cgp_schedule="every_14_days_and_storm", **people)
    record.inspection(permit, at=record.ago(days=3))
    record.area(permit, "Lot 1", record.ago(days=40), ("activity_ceased", record.ago(days=8)))
    record.storm(permit, 0)
    return permit


def test_overdue_first_then_due_then_upcoming_with_due_time_reason_and_citation(make, record, signed_in):
    inspector = make.user("inspector")
    permit = busy_site(make, record, inspectors=[inspector])
    items = now_items(signed_in(inspector).get(f"/permits/{permit.id}").text)
    statuses = [item.split()[0] for item in items]
    assert statuses == sorted(statuses, key=["Overdue", "Due", "Upcoming"].index), items
    assert statuses[0] == "Overdue" and "Upcoming" in statuses
    [started] = [i for i in items if i.startswith("Overdue Stabilization started: Area Lot 1 overdue since")]
    assert "CGP 2022 Part 2.2.14.a.i" in started and "days late" in started
    [storm] = [i for i in items if i.startswith("Due Storm inspection:")]
    # Due 24 h after the storm reached the threshold an hour ago: tomorrow, shown by weekday and time; today
    # (run in the first hour after local midnight, the storm reached it yesterday), by its time alone.
    due = (record.ago(hours=1) + dt.timedelta(days=1)).astimezone(LOCAL_TZ)
    shown = f"{due:%-I:%M %p}" if due.date() == record.local_day(0) else f"{due:%a %-I:%M %p}"
    assert f"due by {shown}" in storm
    assert "CGP 2022 Part 4.2" in storm
    # The overdue ones come before the storm inspection that is merely due.
    assert items.index(started) < items.index(storm)


def test_the_page_leads_with_what_to_do_and_folds_the_rest(make, record, signed_in):
    inspector = make.user("inspector")
    permit = busy_site(make, record, inspectors=[inspector])
    page = signed_in(inspector).get(f"/permits/{permit.id}").text
    assert page.index('id="now"') < page.index("<details")
    folds = dict(re.findall(r'<details class="fold" id="fold-(\w+)"( open)?>', page))
    assert folds["areas"] == " open" and folds["inspections"] == " open"
    assert folds["photos"] == "" and folds["documents"] == "" and folds["facts"] == ""
    assert "<summary>Disturbed areas</summary>" in page and "<summary>Documents</summary>" in page
    # The held-copy note is there for the device, hidden on the live page.
    assert "data-held-note hidden>As known when held at" in page


def answers(page: str) -> dict[str, list[str]]:
    """Each item's kind → the words of the actions beside it."""
    out: dict[str, list[str]] = {}
    for item in part(page, "now").split("<li")[1:]:
        kind = re.search(r'data-kind="(\w+)"', item).group(1)
        do = item.split('class="now-do"', 1)[1] if 'class="now-do"' in item else ""
        out.setdefault(kind, []).extend(text(b) for b in re.findall(r"<(?:button|a)\b[^>]*>(.*?)</(?:button|a)>", do))
    return out


def test_each_role_is_offered_only_the_actions_it_may_take(make, record, signed_in):
    inspector, owner, agent = make.user("inspector"), make.user("permittee"), make.user("agent")
    permit = busy_site(make, record, inspectors=[inspector], owner=owner)

    mine = answers(signed_in(inspector).get(f"/permits/{permit.id}").text)
    assert mine["storm_inspection"] == ["Start"] and mine["inspection"] == ["Start"]
    assert mine["stabilization"] == ["Record"] and mine["walk_through"] == ["Start"]
    page = signed_in(inspector).get(f"/permits/{permit.id}").text
    assert re.search(r'data-kind="storm_inspection".*?name="type" value="erosion_control"', part(page, "now"), re.S)

    # An agent records areas but does not make the engineer's inspections (§380-16 C(2)-(3)).
    town = answers(signed_in(agent).get(f"/permits/{permit.id}").text)
    assert town["stabilization"] == ["Record"] and town["storm_inspection"] == [] and town["walk_through"] == []

    # The permittee sees what is owed, and no action they may not take.
    theirs = answers(signed_in(owner).get(f"/permits/{permit.id}").text)
    assert set(theirs) == set(mine)
    assert all(words == [] for words in theirs.values()), theirs


def test_record_takes_the_user_to_the_areas(make, record, signed_in):
    inspector = make.user("inspector")
    permit = busy_site(make, record, inspectors=[inspector])
    page = signed_in(inspector).get(f"/permits/{permit.id}").text
    record_link = re.search(r'data-kind="stabilization".*?<a class="btn" href="([^"]+)">Record</a>',
                            part(page, "now"), re.S)
    assert record_link.group(1) == f"/permits/{permit.id}#areas"
    assert 'id="areas"' in page



def test_a_chain_of_missed_inspections_is_one_item_with_its_count(make, record, signed_in):
    inspector = make.user("inspector")
    # Seven-day schedule, construction 30 days ago, never inspected: four routine deadlines have passed.
    permit = started_permit(make, record, days_ago=30, inspectors=[inspector])
    items = now_items(signed_in(inspector).get(f"/permits/{permit.id}").text)
    routine = [i for i in items if i.startswith("Overdue Erosion-control inspection: Whole site")]
    assert len(routine) == 1, items
    assert re.search(r"\d+ more of the same are open too: the next inspection meets them all\.", routine[0])
    assert "days late" in routine[0]


def test_every_kind_of_obligation_has_an_answer_the_policy_and_the_app_know(app):
    assert set(ANSWERS) == set(OBLIGATION_KIND_LABELS)
    for kind, answer in ANSWERS.items():
        assert answer.action in ACTIONS, kind
        if answer.inspection_type:
            assert answer.inspection_type in INSPECTION_TYPES, kind
        elif answer.endpoint:
            assert answer.endpoint in app.view_functions, kind
        else:
            assert answer.section in {"areas", "inspections"}, kind


def test_a_draft_report_is_finished_by_its_author_and_not_opened_by_anyone_else(make, record, signed_in):
    author, colleague = make.user("inspector"), make.user("inspector")
    permit = started_permit(make, record, inspectors=[author, colleague])
    draft = Inspection(permit_id=permit.id, type="erosion_control", status="draft", performed_at=record.ago(hours=2),
                       inspector_id=author.id, inspector_name=author.name, inspector_credentials="P.E. (MA) No. 40001")
    db.session.add(draft)
    db.session.commit()

    theirs = signed_in(author).get(f"/permits/{permit.id}").text
    assert answers(theirs)["report"] == ["Finish"]
    assert f'href="/inspections/{draft.id}">Finish</a>' in part(theirs, "now")

    page = signed_in(colleague).get(f"/permits/{permit.id}").text
    assert answers(page)["report"] == []
    assert draft.id not in page
