"""The server's own report form, used with no server, in a real Chromium: a new report under an id the
device made, kept by the service worker, sent again by the outbox with its Idempotency-Key (once, even
when the first answer is lost), and a refused one shown as the server's form with its errors, to fix."""
from __future__ import annotations

import pytest
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection

from tests.offline.offline_helpers import WireFaults, answer_checklist, draw_signature, hold_permits, sign_in_controlled

pytestmark = pytest.mark.browser


def reports(permit) -> list[Inspection]:
    db.session.expire_all()
    return list(db.session.scalars(select(Inspection).where(Inspection.permit_id == permit.id)))


def kept_posts(page) -> list[dict]:
    return page.evaluate("FormStore.all().then(posts => posts.map(p => ({id: p.id, url: p.url, state: p.state})))")


def wait_until(page, check, timeout_s: float = 15):
    for _ in range(int(timeout_s * 10)):
        found = check()
        if found:
            return found
        page.wait_for_timeout(100)
    refused = page.evaluate("FormStore.all().then(posts => posts.map(p => p.html || ''))")
    raise AssertionError(f"never happened; refused: {[r[r.find('error-summary'):][:600] for r in refused]}")


def fill_new_report(page, server, permit, evaluation: str | None = "compliant") -> str:
    """Open the held new report form, answer it, sign and submit; returns the id the device made."""
    page.goto(f"{server.url}/permits/{permit.id}/inspections/new/erosion_control")
    made = page.get_attribute("#report-form", "data-new-record")
    assert f"/inspections/{made}" in page.get_attribute("#report-form", "action")
    answer_checklist(page)
    if evaluation:
        page.check(f"#evaluation-{evaluation}")
    draw_signature(page)
    page.click("#submit-report")
    return made


@pytest.mark.parametrize("offline", ["browser", "server_stopped"])
def test_a_new_report_submitted_offline_arrives_once(offline, site, server, page, context):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    if offline == "browser":
        context.set_offline(True)
    else:
        server.stop()

    made = fill_new_report(page, server, permit)
    page.wait_for_selector("#offline-message:has-text('Saved on this device — will sync')")
    # Reloaded with the item waiting: it is still there, and nothing reached the server.
    page.goto(f"{server.url}/outbox")
    page.wait_for_selector("#outbox-badge[data-count='1']")
    assert [p["url"] for p in kept_posts(page)] == [f"/inspections/{made}/submit"]
    assert reports(permit) == []

    if offline == "browser":
        context.set_offline(False)  # the `online` event sends it
    else:
        server.start()
        page.click("#sync-now")  # a server coming back raises no `online` event
    wait_until(page, lambda: not kept_posts(page))
    [report] = reports(permit)
    assert report.id == made and report.status == "submitted"


def test_a_replay_whose_answer_was_lost_is_applied_once(site, server, page, app):
    inspector, permit = site
    faults = WireFaults(app.wsgi_app)
    app.wsgi_app = faults
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    made = fill_new_report(page, server, permit)
    page.wait_for_selector("#offline-message")

    server.start()
    faults.drop_form_answers = 1  # the server applies the first delivery; its answer never arrives
    page.goto(f"{server.url}/outbox")
    wait_until(page, lambda: faults.dropped == 1)
    assert len(reports(permit)) == 1 and kept_posts(page)  # applied, but the device does not know yet
    page.click("#sync-now")
    wait_until(page, lambda: not kept_posts(page))
    [report] = reports(permit)
    assert report.id == made and report.status == "submitted"


def test_an_expired_login_keeps_the_post_until_signed_in_again(site, server, page, context):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    fill_new_report(page, server, permit)
    page.wait_for_selector("#offline-message")
    context.clear_cookies()  # the session is gone by the time the network is back
    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    page.wait_for_selector("#outbox-login")
    assert len(kept_posts(page)) == 1 and reports(permit) == []

    sign_in_controlled(page, server, inspector)
    page.goto(f"{server.url}/outbox")
    wait_until(page, lambda: not kept_posts(page))
    assert [r.status for r in reports(permit)] == ["submitted"]


def test_a_refused_report_comes_back_as_the_form_with_its_errors_to_fix(site, server, page, context):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    context.set_offline(True)
    made = fill_new_report(page, server, permit, evaluation=None)  # the evaluation is required
    page.wait_for_selector("#offline-message")

    context.set_offline(False)
    page.goto(f"{server.url}/outbox")
    wait_until(page, lambda: [p["state"] for p in kept_posts(page)] == ["refused"])
    assert reports(permit) == []
    page.reload()
    page.click("[data-correct]")
    # The server's own page: the error beside the field, the form posted under the same device id.
    page.wait_for_selector("#error-summary")
    assert page.inner_text("#evaluation .field-error")
    page.check("#evaluation-compliant")
    draw_signature(page)
    page.click("#submit-report")
    page.wait_for_selector("#report-status:has-text('Submitted')")
    [report] = reports(permit)
    assert report.id == made and report.status == "submitted"
    page.goto(f"{server.url}/outbox")
    assert kept_posts(page) == []
