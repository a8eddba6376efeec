"""The town dashboard, my day and the timeline: the schedule engine over the stored record."""
from __future__ import annotations

import datetime as dt
import re
from html import unescape

from sqlalchemy import delete, insert, select

from inspect_app.extensions import db
from inspect_app.pages.dashboard import services
from inspect_app.permits.models import Permit
from inspect_app.schedule.models import PermitObligation
from inspect_app.types import LOCAL_TZ, utcnow

DAY = dt.timedelta(days=1)


def started_permit(make, record, days_ago: int = 20, **fields):
    """An active permit whose construction began `days_ago` days ago (local calendar)."""
    fields.setdefault("issued_on", record.local_day(days_ago + 30))
    return make.permit(construction_started_on=record.local_day(days_ago), **fields)


def rows(page: str) -> list[str]:
    """The text of each body row of the obligations table."""
    body = page.split("<tbody>", 1)[1].split("</tbody>", 1)[0] if "<tbody>" in page else ""
    return [" ".join(unescape(re.sub(r"<[^>]+>", " ", row)).split()) for row in body.split("<tr>")[1:]]


def test_query_count_does_not_grow_with_permits(make, record, signed_in, count_queries):
    agent = make.user("agent")
    client = signed_in(agent)

    def add_permits(n: int) -> None:
        for i in range(n):
            permit = started_permit(make, record, inspectors=[make.user("inspector")], structures=["Pipe run A"])
            record.inspection(permit, at=record.ago(days=9 + i % 3))
            record.corrective_action(permit, found=record.ago(days=10))
            record.area(permit, "North slope", record.ago(days=30), ("activity_ceased", record.ago(days=8)))
            record.storm(permit, 2)

    add_permits(3)
    with count_queries() as few:
        page = client.get("/dashboard/")
    assert page.status_code == 200
    assert "Across 3 permits" in page.text
    add_permits(27)
    with count_queries() as many:
        page = client.get("/dashboard/")
    assert "Across 30 permits" in page.text
    assert len(few) == len(many), (few, many)


def test_overdue_stabilization_shows_with_reason_and_citation(make, record, signed_in):
    permit = started_permit(make, record, number="LM-2026-017", site_address="12 Bliss Road")
    record.inspection(permit, at=record.ago(days=1))
    record.area(permit, "West lot", record.ago(days=40), ("activity_ceased", record.ago(days=8)))
    page = signed_in(make.user("agent")).get("/dashboard/").text
    [started] = [r for r in rows(page) if "Stabilization started" in r]
    assert "Overdue" in started and "CGP 2022 Part 2.2.14.a.i" in started
    [row] = [r for r in rows(page) if "Stabilization completed" in r]
    assert "LM-2026-017" in row and "12 Bliss Road" in row and "Area West lot" in row
    assert "Overdue" in row and "late" in row
    ceased = record.ago(days=8).astimezone(LOCAL_TZ)
    assert f"stopped on {ceased:%a} {ceased.day} {ceased:%b %Y}" in row
    assert "(7 days after work stopped)" in row
    assert "§380-11 C(3)(a)" in row
    # Due at the end of the seventh day after work ceased, shown in local time.
    assert f"{(ceased + 7 * DAY):%b} {(ceased + 7 * DAY).day}, {(ceased + 7 * DAY).year} 11:59 PM" in row


def test_overdue_corrective_action_shows_and_a_finished_one_does_not(make, record, signed_in):
    permit = started_permit(make, record, number="LM-2026-021")
    record.corrective_action(permit, "significant_repair", found=record.ago(days=10))
    record.corrective_action(permit, "new_or_replacement_control", found=record.ago(days=12),
                             done=record.ago(days=9))
    page = signed_in(make.user("agent")).get("/dashboard/").text
    actions = [r for r in rows(page) if "Corrective action" in r]
    assert len(actions) == 1
    assert "A significant repair found on" in actions[0]
    # Due at the end of the 7th local day after it was found, so now between 2 and 3 days late.
    assert "CGP 2022 Part 5.2" in actions[0] and "Overdue" in actions[0] and "2 days late" in actions[0]
    assert "Re-trench" in actions[0]  # what has to be done


def test_rows_are_sorted_most_late_first(make, record, signed_in):
    permit = started_permit(make, record)
    record.inspection(permit, at=record.ago(hours=2))
    record.corrective_action(permit, "significant_repair", found=record.ago(days=11))
    record.corrective_action(permit, "significant_repair", found=record.ago(days=20))
    client = signed_in(make.user("agent"))
    late = [r for r in rows(client.get("/dashboard/?kind=corrective_action").text)]
    assert ["12 days late" in late[0], "3 days late" in late[1]] == [True, True]
    least = rows(client.get("/dashboard/?kind=corrective_action&sort=least_late").text)
    assert least == list(reversed(late))


def test_filters_by_town_kind_and_inspector(make, record, signed_in):
    first, second = make.user("inspector", name="Ada Inspector"), make.user("inspector", name="Bo Inspector")
    longmeadow = started_permit(make, record, number="LM-1", inspectors=[first])
    southborough = started_permit(make, record, town="southborough", number="SB-1", inspectors=[second])
    for permit in (longmeadow, southborough):
        record.corrective_action(permit, found=record.ago(days=10))
    admin = make.user("admin", town=None)  # an admin with no town sees every town
    client = signed_in(admin)
    everything = rows(client.get("/dashboard/").text)
    assert any("LM-1" in r for r in everything) and any("SB-1" in r for r in everything)

    town = make.town("southborough").id
    only_town = rows(client.get(f"/dashboard/?town={town}").text)
    assert only_town and all("SB-1" in r for r in only_town)

    only_kind = rows(client.get("/dashboard/?kind=corrective_action").text)
    assert {r.split()[0] for r in only_kind} == {"LM-1", "SB-1"}
    assert all("Corrective action" in r for r in only_kind)

    only_inspector = rows(client.get(f"/dashboard/?inspector={first.id}").text)
    assert only_inspector and all(r.startswith("LM-1") for r in only_inspector)


def test_upcoming_toggle_adds_what_opens_within_the_days_asked(make, record, signed_in):
    permit = started_permit(make, record, structures=["Infiltration chamber"])
    record.inspection(permit, at=record.ago(hours=3))
    client = signed_in(make.user("agent"))
    assert not any("Walk-through" in r for r in rows(client.get("/dashboard/").text))
    # The walk-through has no date until the final inspection, so no number of days brings it in.
    assert not any("Walk-through" in r for r in rows(client.get("/dashboard/?upcoming=1&days=30").text))
    assert any("Erosion-control inspection" in r for r in rows(client.get("/dashboard/").text))


def test_htmx_filter_gets_only_the_table_fragment(make, record, signed_in):
    permit = started_permit(make, record)
    record.corrective_action(permit, found=record.ago(days=10))
    client = signed_in(make.user("agent"))
    page = client.get("/dashboard/?kind=corrective_action")
    fragment = client.client.get("/dashboard/?kind=corrective_action",
                                 headers={"HX-Request": "true", "HX-Target": "obligations"})
    assert "HX-Request" in page.headers["Vary"] and "HX-Request" in fragment.headers["Vary"]
    assert "<html" in page.text and 'hx-get="/dashboard/"' in page.text and 'hx-push-url="true"' in page.text
    assert "<html" not in fragment.text and "<form" not in fragment.text
    # The fragment, and the map link above it swapped out of band: the map shows what the list is filtered to.
    oob, _, rest = fragment.text.lstrip().partition("\n")
    assert oob == ('<a class="btn" id="map-link" hx-swap-oob="true" '
                   'href="/dashboard/map?kind=corrective_action&amp;sort=late&amp;days=7">Map</a>')
    assert rest.lstrip().startswith('<div id="obligations">') and 'hx-swap-oob' not in page.text
    assert rows(fragment.text) == rows(page.text)
    # A boosted navigation (HX-Request without our target) gets the whole page.
    boosted = signed_in(make.user("agent")).client.get("/dashboard/", headers={"HX-Request": "true",
                                                                             "HX-Boosted": "true"})
    assert "<html" in boosted.text


def test_bad_query_string_is_ignored_not_a_crash(make, record, signed_in):
    permit = started_permit(make, record)
    record.corrective_action(permit, found=record.ago(days=10))
    client = signed_in(make.user("agent"))
    page = client.get("/dashboard/?page=abc&days=-4&kind=bogus&sort=sideways&town=nowhere")
    assert page.status_code == 200
    assert "Nothing is due or late." in page.text  # an unknown town has no permits
    assert rows(client.get("/dashboard/?page=999&days=x&kind=bogus").text)


def test_pagination_pages_through_every_row(make, record, signed_in, app):
    permit = started_permit(make, record)
    record.inspection(permit, at=record.ago(hours=1))
    for n in range(53):
        record.corrective_action(permit, found=record.ago(days=10, hours=n))
    client = signed_in(make.user("agent"))
    first = client.get("/dashboard/?kind=corrective_action").text
    second = client.get("/dashboard/?kind=corrective_action&page=2").text
    assert "Page 1 of 2 (53 items)" in first and "Page 2 of 2" in second
    assert len(rows(first)) == 50 and len(rows(second)) == 3
    assert "53 overdue" in first  # the count is over every row, not the page


def test_my_day_lists_only_the_inspectors_permits(make, record, signed_in):
    mine, theirs = make.user("inspector"), make.user("inspector")
    own = started_permit(make, record, number="MINE-1", inspectors=[mine])
    other = started_permit(make, record, number="THEIRS-1", inspectors=[theirs])
    for permit in (own, other):
        record.inspection(permit, at=record.ago(days=12))
        record.area(permit, "East", record.ago(days=40), ("activity_ceased", record.ago(days=9)))
    record.corrective_action(own, "routine_maintenance", found=record.ago(days=30), done=record.ago(days=29))
    page = signed_in(mine).get("/dashboard/my-day")
    assert page.status_code == 200
    assert "MINE-1" in page.text and "THEIRS-1" not in page.text
    text = " ".join(unescape(re.sub(r"<[^>]+>", " ", page.text)).split())
    assert "§380-11 C(3)(a)" in text and "CGP 2022 Part 4.2" in text
    # Most late first: the missed weekly inspection (due 5 days ago) before the completed stabilization
    # (due 2 days ago).
    assert text.index("Erosion-control inspection") < text.index("Stabilization completed")


def test_only_inspectors_have_a_day_and_only_agents_a_dashboard(make, signed_in):
    for role in ("permittee", "inspector"):
        assert signed_in(make.user(role)).get("/dashboard/").status_code == 403
    for role in ("agent", "permittee"):
        assert signed_in(make.user(role)).get("/dashboard/my-day").status_code == 403


def test_agent_of_another_town_sees_none_of_this_towns_permits(make, record, signed_in):
    permit = started_permit(make, record, number="LM-SECRET")
    record.corrective_action(permit, found=record.ago(days=10))
    client = signed_in(make.user("agent", town="southborough"))
    page = client.get("/dashboard/")
    assert page.status_code == 200 and "LM-SECRET" not in page.text and "Across 0 permits" in page.text
    assert "LM-SECRET" not in client.get(f"/dashboard/?town={permit.jurisdiction_id}").text
    assert client.get(f"/permits/{permit.id}/timeline").status_code == 404


def test_timeline_shows_every_obligation_met_ones_too(make, record, signed_in):
    owner = make.user("permittee")
    permit = started_permit(make, record, days_ago=10, owner=owner, number="LM-TL-1")
    record.inspection(permit, at=record.ago(days=12))  # before construction: the pre-construction inspection
    record.inspection(permit, at=record.ago(days=5))
    record.corrective_action(permit, "routine_maintenance", found=record.ago(days=4), done=record.ago(days=4, hours=-2))
    page = signed_in(owner).get(f"/permits/{permit.id}/timeline")
    assert page.status_code == 200
    table = rows(page.text)
    pre = [r for r in table if r.startswith("Pre-construction inspection")]
    assert len(pre) == 1 and "Met" in pre[0] and "§380-16 C(4)(b)" in pre[0]
    met_action = [r for r in table if r.startswith("Corrective action")]
    assert len(met_action) == 1 and "Met" in met_action[0] and "met on time" in met_action[0]
    assert any(r.startswith("Start of work") and "§380-10 K" in r for r in table)
    assert sum("Erosion-control inspection" in r for r in table) >= 2  # the one met and the next one due
    # The permit page links to it.
    assert f'/permits/{permit.id}/timeline' in signed_in(owner).get(f"/permits/{permit.id}").text


def test_timeline_of_someone_elses_permit_does_not_exist(make, record, signed_in):
    permit = started_permit(make, record, owner=make.user("permittee"))
    assert signed_in(make.user("permittee")).get(f"/permits/{permit.id}/timeline").status_code == 404
    assert signed_in(make.user("inspector")).get(f"/permits/{permit.id}/timeline").status_code == 404
    assert signed_in(make.user("agent")).get("/permits/no-such-permit/timeline").status_code == 404


def my_day_items(page: str) -> list[str]:
    """The HTML of each item of my day's list."""
    listed = page.split('<ol class="list my-day">', 1)[1].split("</ol>", 1)[0] if "my-day" in page else ""
    return listed.split("<li ")[1:]


def test_my_day_is_in_the_inspectors_menu_and_starts_each_inspection_due(make, record, signed_in):
    inspector = make.user("inspector")
    # Weekly inspections missed for weeks: one duty, met by the next inspection made.
    late = started_permit(make, record, days_ago=40, number="LATE-1", inspectors=[inspector])
    record.area(late, "East", record.ago(days=40), ("activity_ceased", record.ago(days=9)))
    other = started_permit(make, record, days_ago=12, number="OTHER-1", inspectors=[inspector])
    client = signed_in(inspector)
    home = client.get("/permits/").text
    assert re.search(r'<a href="/dashboard/my-day">My day</a>', home)

    items = my_day_items(client.get("/dashboard/my-day").text)
    routine = [item for item in items if 'data-kind="inspection"' in item]
    # One line, and one Start, per permit whose inspection is due: not one per missed week.
    assert len(routine) == 2, routine
    for permit, item in zip((late, other), sorted(routine, key=lambda item: "OTHER-1" in item)):
        assert f'action="/permits/{permit.id}/inspections"' in item
        assert 'name="type" value="erosion_control"' in item and ">Start</button>" in item
        # Offline, the worker takes the Start to this permit's held new report.
        assert f'value="/permits/{permit.id}/inspections/new/erosion_control"' in item
    assert "more like it" in next(item for item in routine if "LATE-1" in item)
    # Stabilization is recorded on the area, not started: no Start on it.
    assert all("<button" not in item for item in items if 'data-kind="stabilization' in item)

    started = client.post(f"/permits/{late.id}/inspections", {"type": "erosion_control", "latitude": "",
                                                                  "longitude": ""})
    assert started.status_code == 303 and re.search(r"/inspections/[0-9a-f-]{36}$", started.headers["Location"])
    # The agent has the dashboard instead (my day is the inspector's: accounts/policy.py).
    assert "/dashboard/my-day" not in signed_in(make.user("agent")).get("/permits/").text


def test_every_page_of_each_sort_is_the_whole_list_sorted_then_cut(make, app):
    """The page is sorted from the rows whose deadline can be on it (issue 33): ties on the deadline across
    pages and open-ended rows come out as from sorting every row, for a town and for every town."""
    now = utcnow()
    permits = [make.permit(town, number=f"P-{n}") for n, town in enumerate(["longmeadow", "southborough"] * 3)]
    db.session.execute(delete(PermitObligation))  # only the rows below
    rows = []
    for n, permit in enumerate(permits):
        for k in range(4):
            # Two deadlines shared by many rows, one of each permit's own, and an open-ended duty.
            due = [now - dt.timedelta(days=2), now - dt.timedelta(days=1), now - dt.timedelta(hours=n), None][k]
            rows.append(dict(permit_id=permit.id, kind="corrective_action", subject=f"action:{n}-{k}",
                             about="Repair", opens_at=now - dt.timedelta(days=3), due_at=due, reason="Owed",
                             citation="CGP 2022 Part 5.2", computed_at=now))
    db.session.execute(insert(PermitObligation), rows)
    db.session.commit()
    number = {p.id: p.number for p in permits}
    for scope in (select(Permit), select(Permit).where(Permit.jurisdiction_id == permits[0].jurisdiction_id)):
        ids = set(db.session.scalars(scope.with_only_columns(Permit.id)))
        mine = [r for r in rows if r["permit_id"] in ids]
        far = dt.datetime.max.replace(tzinfo=dt.UTC)
        expected = {
            "late": sorted(mine, key=lambda r: (r["due_at"] is None, r["due_at"] or far, number[r["permit_id"]],
                                                r["subject"])),
            "least_late": sorted(mine, key=lambda r: (r["due_at"] is None, -(r["due_at"] or far).timestamp(),
                                                      number[r["permit_id"]], r["subject"])),
            "permit": sorted(mine, key=lambda r: (number[r["permit_id"]], r["due_at"] is None, r["due_at"] or far,
                                                  r["subject"])),
        }
        for sort, want in expected.items():
            shown = []
            for page in range(1, 20):
                board = services.town_board(scope, services.Filters(sort=sort, page=page), now, per_page=5)
                if board.page != page:
                    break
                shown += [(row.permit.number, row.obligation.subject) for row in board.rows]
            assert shown == [(number[r["permit_id"]], r["subject"]) for r in want], sort


def test_the_inspector_filter_names_only_inspectors_who_work_in_the_agents_town(make, record, signed_in):
    """The filter listed every inspector of the state: a Longmeadow agent read the names of people who work only
    in Southborough (the permit list's filter never offered them: policy.people_to_choose)."""
    here, elsewhere = make.user("inspector", name="Lena Longmeadow"), make.user("inspector", name="Sam Southborough")
    started_permit(make, record, number="LM-1", inspectors=[here])
    started_permit(make, record, town="southborough", number="SB-1", inspectors=[elsewhere])
    client = signed_in(make.user("agent"))  # Longmeadow's
    for page in ("/dashboard/", "/dashboard/map"):
        text = client.get(page).text
        assert "Lena Longmeadow" in text and "Sam Southborough" not in text, page
    assert "Sam Southborough" in signed_in(make.user("admin", town=None)).get("/dashboard/").text


def test_the_counts_above_the_list_follow_its_type_and_upcoming_window(make, record, signed_in):
    """With a type chosen the list showed one overdue corrective action under a line saying "3 overdue", and
    "upcoming" counted every later obligation whatever window was asked."""
    permit = started_permit(make, record, number="LM-COUNT")
    record.inspection(permit, at=record.ago(days=12))  # the weekly inspection: overdue
    record.corrective_action(permit, found=record.ago(days=10))  # overdue
    record.area(permit, "East", record.ago(days=40), ("activity_ceased", record.ago(days=9)))  # overdue
    client = signed_in(make.user("agent"))

    def said(query: str) -> str:
        return re.search(r"Across \d+ permits?: [^.]+\.", _text(client.get(f"/dashboard/{query}").text)).group(0)

    everything = said("")
    assert re.search(r"(\d+) overdue", everything).group(1) != "1"
    assert said("?kind=corrective_action").startswith("Across 1 permit: 1 overdue , 0 due,")
    assert said("?kind=corrective_action").endswith("(Corrective action only).")
    assert "upcoming within 1 days" in said("?upcoming=1&days=1")


def test_query_keys_of_url_for_itself_are_filters_no_one_asked_for_not_a_crash(make, record, signed_in, app):
    """The page and the map passed their query string whole to the links between them: `?endpoint=x` or
    `?_method=POST` was a 500 for any agent following such a link."""
    app.config["PROPAGATE_EXCEPTIONS"] = False  # as in production: a crash is a 500 page
    permit = started_permit(make, record, number="LM-1")
    record.corrective_action(permit, found=record.ago(days=10))
    client = signed_in(make.user("agent"))
    for page in ("/dashboard/", "/dashboard/map"):
        for query in ("endpoint=x", "_method=POST", "_anchor=x&_external=1", "kind=corrective_action&endpoint=x"):
            response = client.get(f"{page}?{query}")
            assert response.status_code == 200, (page, query)
            assert "_method" not in response.text and "endpoint=" not in response.text
    page = client.get("/dashboard/?kind=corrective_action&upcoming=1&days=3").text
    assert 'href="/dashboard/map?kind=corrective_action&amp;sort=late&amp;days=3&amp;upcoming=1"' in page


def _text(page: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", page)).split())
