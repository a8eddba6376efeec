"""The next new report after one submitted with no network is a report of its own (never the same post again), even
when it is opened before the page after the first had said the first was taken (opened at once, or on a slow
tablet): its id and key are new, and both reports wait in the outbox and reach the server."""
from __future__ import annotations

import pytest

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from tests.builders import jpeg
from tests.offline.offline_helpers import (device_id, fill_erosion_report, hold_permits, new_report_url, outbox,
                                           sign_in_controlled, wait_for_form, wait_for_outbox)

pytestmark = pytest.mark.browser


def test_a_report_opened_before_the_first_was_said_taken_is_a_new_one(site, server, page):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    first = fill_erosion_report(page, [jpeg(41)])
    # As if the page after the post had not run yet: the device has not marked the first report taken.
    page.evaluate("""() => DeviceStore('drafts').all().then(kept => Promise.all(kept.map(d =>
        DeviceStore('drafts').put({ ...d, taken: false, sent: null }))))""")

    page.goto(new_report_url(server, permit))
    wait_for_form(page)

    second = device_id(page)
    assert second != first
    second = fill_erosion_report(page, [jpeg(42)])
    assert len(outbox(page)) == 2

    server.start()
    page.goto(f"{server.url}/outbox")
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: items == [])
    db.session.expire_all()
    assert {db.session.get(Inspection, i).status for i in (first, second)} == {"submitted"}
