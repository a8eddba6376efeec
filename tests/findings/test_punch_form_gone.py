"""A punch-list item posted with the punch list's former form (kept on a device before that form went, and
sent by its outbox) is answered 410 with a page saying where to add it now: never a bare 404."""
from __future__ import annotations

import uuid

from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import PunchListItem
from tests.inspections.report_helpers import start


def test_the_former_punch_form_answers_gone_with_what_to_do_and_changes_nothing(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    client = signed_in(inspector)
    walk = start(client, permit, "walk_through")

    # As the outbox sends it again: a fresh CSRF token and the post's idempotency key.
    answer = client.client.post(f"/inspections/{walk.id}/punch", headers={"Idempotency-Key": str(uuid.uuid4())},
                                data={"csrf_token": client.token, "newpunch-description": "Loam and seed the swale"})

    assert answer.status_code == 410
    assert "This punch-list item was not added" in answer.text
    assert "Add the item to the walk-through's punch list on the report's own form" in answer.text
    assert "Loam and seed the swale" in answer.text
    assert db.session.scalar(select(func.count()).select_from(PunchListItem)) == 0

    opened = client.post(f"/inspections/{walk.id}/punch", {"moved": "1"})
    assert opened.status_code == 303 and opened.headers["Location"].endswith(f"/inspections/{walk.id}#punch-list")
    assert db.session.scalar(select(func.count()).select_from(PunchListItem)) == 0


def test_the_former_punch_form_tells_nothing_of_a_report_someone_else_may_see(make, signed_in):
    inspector, stranger = make.user("inspector"), make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    walk = start(signed_in(inspector), permit, "walk_through")
    answer = signed_in(stranger).post(f"/inspections/{walk.id}/punch", {"newpunch-description": "Seed"})
    assert answer.status_code == 404
