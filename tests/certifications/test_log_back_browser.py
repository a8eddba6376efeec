"""The permittee's maintenance log on a tablet: an entry added, then Back to the log, and the form is empty, not
holding the entry just sent (the browser filled it in again, with a new duplicate-post key, and one tap logged the
same work twice)."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import func, select

from inspect_app.certifications.models import MaintenanceLogEntry, ResponsibleParty
from inspect_app.extensions import db
from tests.certifications.om_helpers import local_today

pytestmark = pytest.mark.browser


def _entries() -> int:
    db.session.expire_all()
    return db.session.scalar(select(func.count()).select_from(MaintenanceLogEntry))


def test_back_to_the_log_after_adding_an_entry_does_not_log_it_again(browser, live_server, sign_in, make):
    owner = make.user("permittee", name="Pat Owner", email="pat.owner@example.org")
    completed_on = local_today() - dt.timedelta(days=60)
    permit = make.permit(owner=owner, construction_started_on=completed_on - dt.timedelta(days=200),
                         issued_on=completed_on - dt.timedelta(days=300))
    permit.status, permit.completed_on = "completed", completed_on
    db.session.add(ResponsibleParty(permit_id=permit.id, user_id=owner.id, name=owner.name, role="owner",
                                    email=owner.email, starts_on=completed_on))
    db.session.commit()
    context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True)
    page = sign_in(context.new_page(), owner)
    page.goto(f"{live_server.url}/permits/{permit.id}/om/log")
    form = page.locator("form[action$='/om/log']")
    form.locator("input[name=log-kind]").first.check()
    form.locator("textarea[name=log-description]").fill("Swept the inlet grate")
    form.locator("button[type=submit]").tap()
    page.wait_for_url(re.compile(r".*/om/log/[0-9a-f-]{36}$"))
    assert _entries() == 1
    page.go_back()
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    assert page.locator("textarea[name=log-description]").input_value() == ""
    page.locator("form[action$='/om/log'] button[type=submit]").tap()
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    assert _entries() == 1
    context.close()
