"""The permit page lists the permit's inspections newest first: the latest is the one an inspector looks for."""
from __future__ import annotations

import datetime as dt
import re

UTC = dt.UTC


def test_the_permit_page_lists_its_inspections_newest_first(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    for day in (10, 3, 24, 17):  # recorded out of order, as a device syncs them
        make.inspection(permit, performed_at=dt.datetime(2026, 6, day, 14, 0, tzinfo=UTC), inspector=inspector)

    page = signed_in(inspector).get(f"/permits/{permit.id}").text
    table = page[page.index('id="inspection-list"'):page.index("</table>", page.index('id="inspection-list"'))]
    shown = re.findall(r'<a href="/inspections/[^"]+">([^<]+)</a>', table)

    assert [date.split(",")[0] for date in shown] == ["Jun 24", "Jun 17", "Jun 10", "Jun 3"]


def _rows(page: str) -> list[list[str]]:
    """The list's rows, each as the text of its cells (tags left out, entities as written)."""
    table = page[page.index('id="inspection-list"'):page.index("</table>", page.index('id="inspection-list"'))]
    return [[re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<td>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]  # the first is the heading


def test_each_listed_report_shows_its_type_inspector_evaluation_notice_and_status(make, signed_in):
    """What each column says for each kind of report: an amendment, a draft of the reader's own (another's is not
    listed), an evaluation with violations, a notice owed and given or not, none owed for the town's own random
    inspection, and a name that must be escaped."""
    inspector, other, agent = make.user("inspector", name="Ann <b>Lee</b>"), make.user("inspector"), make.user("agent")
    permit = make.permit(inspectors=[inspector, other])
    at = lambda day: dt.datetime(2026, 6, day, 14, 0, tzinfo=UTC)  # noqa: E731
    original = make.inspection(permit, "periodic", performed_at=at(1), inspector=inspector, notice_given=True)
    make.inspection(permit, "periodic", performed_at=at(2), inspector=inspector, amends_id=original.id,
                    evaluation="violations")
    make.inspection(permit, "periodic", performed_at=at(3), inspector=agent, trigger="random", evaluation=None)
    make.inspection(permit, "periodic", performed_at=at(4), inspector=inspector, status="draft", evaluation=None)
    make.inspection(permit, "periodic", performed_at=at(5), inspector=other, status="draft", created_by_id=other.id)

    page = signed_in(inspector).get(f"/permits/{permit.id}").text

    ann = "Ann &lt;b&gt;Lee&lt;/b&gt;"  # as typed, escaped
    assert _rows(page) == [
        ["Jun 4, 2026 10:00 AM", "Periodic inspection", ann, "—", "Not given", "Draft"],
        ["Jun 3, 2026 10:00 AM", "Periodic inspection", agent.name, "—", "Not required", "Submitted"],
        ["Jun 2, 2026 10:00 AM", "Periodic inspection (amendment)", ann, "Violations", "Not given", "Submitted"],
        ["Jun 1, 2026 10:00 AM", "Periodic inspection", ann, "In compliance", "Given", "Submitted"],
    ]
