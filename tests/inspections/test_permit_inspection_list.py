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
