"""A page's reads end committed on PostgreSQL, so the statements psycopg prepared stay prepared; a change the
app did not commit is still never kept (inspect_app/read_commits.py)."""
from __future__ import annotations

import warnings

import pytest
from flask.testing import FlaskClient
from sqlalchemy import func, select, text, update
from sqlalchemy.exc import SAWarning

from inspect_app.accounts.models import User
from inspect_app.audit.models import AuditEntry, add_after_flush
from inspect_app.extensions import db
from sync.services import create_device
from tests.databases import recorded_statements


def _test_routes(app) -> None:
    """Pages that change a user's name and commit nothing (as a bug or an error path would), and one that
    says how many statements its connection holds prepared."""

    @app.get("/_test/rename-by-statement/<user_id>")
    def rename_by_statement(user_id):
        db.session.execute(update(User).where(User.id == user_id).values(name="Renamed, never committed"))
        db.session.scalar(select(func.count()).select_from(User))  # and reads on, as a page does
        return "renamed"

    @app.get("/_test/rename-in-a-select/<user_id>")
    def rename_in_a_select(user_id):
        # A SELECT that reads what a common table expression changed: it begins with WITH, as the pages'
        # reads of the hidden draft parts do, but it is a change.
        renamed = (update(User).where(User.id == user_id).values(name="Renamed, never committed")
                   .returning(User.id).cte())
        db.session.scalars(select(renamed.c.id)).all()
        return "renamed"

    @app.get("/_test/rename-in-session/<user_id>")
    def rename_in_session(user_id):
        db.session.get(User, user_id).name = "Renamed, never committed"
        return "renamed"

    @app.get("/_test/rename-then-fail/<user_id>")
    def rename_then_fail(user_id):
        db.session.execute(update(User).where(User.id == user_id).values(name="Renamed, then the page failed"))
        raise RuntimeError("the page failed after its change")

    @app.get("/_test/queue-audit-entry/<user_id>")
    def queue_audit_entry(user_id):
        # An entry left waiting for a flush that never comes (the session's commit would write it).
        add_after_flush(db.session(), {"actor_id": None, "action": "user.renamed", "entity": "users",
                                       "entity_id": user_id, "permit_id": None, "before": None,
                                       "after": {"name": "Renamed, never committed"}})
        db.session.get(User, user_id)
        return "renamed"

    @app.get("/_test/prepared")
    def prepared():
        return str(db.session.scalar(text("SELECT count(*) FROM pg_prepared_statements")))


@pytest.mark.parametrize("page", ["rename-by-statement", "rename-in-a-select", "rename-in-session",
                                  "rename-then-fail", "queue-audit-entry"])
def test_a_page_that_changed_a_row_and_committed_nothing_leaves_it_as_it_was(app, make, client, page):
    if page == "rename-in-a-select" and db.engine.dialect.name != "postgresql":
        pytest.skip("a change inside a WITH is PostgreSQL's (SQLite has none)")
    _test_routes(app)
    user = make.user("inspector", name="Ada Inspector")
    if page == "rename-then-fail":
        with pytest.raises(RuntimeError, match="the page failed"):
            client.get(f"/_test/{page}/{user.id}")
    else:
        assert client.get(f"/_test/{page}/{user.id}").text == "renamed"
    db.session.remove()
    assert db.session.get(User, user.id).name == "Ada Inspector"
    assert db.session.scalar(select(func.count()).select_from(AuditEntry)
                             .where(AuditEntry.action == "user.renamed")) == 0


def test_pages_leave_their_statements_prepared_on_postgresql(app, make, signed_in):
    if db.engine.dialect.name != "postgresql":
        pytest.skip("prepared statements are psycopg's, on PostgreSQL")
    _test_routes(app)
    inspector = make.user("inspector")
    page = f"/permits/{make.permit(inspectors=[inspector], areas=['Pad']).id}"
    client = signed_in(inspector)
    inspector_id = inspector.id
    db.session.remove()  # the test's own session holds no connection: the pages and the count share one
    # psycopg prepares a statement at its 6th run on a connection, and the pool hands its connections out in
    # turn (the sign-in's and the test's own are among them): asked on each, one holds the page's statements.
    with warnings.catch_warnings(record=True) as caught, recorded_statements() as statements:
        warnings.simplefilter("always")
        for _ in range(16):
            assert client.get(page).status_code == 200
    assert [str(w.message) for w in caught if issubclass(w.category, SAWarning)] == []  # nothing in the logs
    # Every statement of the page (nine): one connection holds them all prepared.
    distinct = set(statements)
    assert len(distinct) >= 9
    assert max(int(client.get("/_test/prepared").text) for _ in range(6)) >= len(distinct)
    # And what the pages read is what is committed: another session's change shows at once.
    db.session.execute(update(User).where(User.id == inspector_id).values(name="Renamed Inspector"))
    db.session.commit()
    db.session.remove()
    assert "Renamed Inspector" in client.get(page).text


def test_a_request_that_shares_its_callers_session_leaves_it_ready_for_the_next(app, make):
    # A caller that holds the app context (a command, or a test calling the app as schemathesis does) shares
    # its session with the requests it makes: after a page's reads are committed, the next request still writes.
    inspector = make.user("inspector")
    make.permit(inspectors=[inspector], areas=["North"])
    _, token = create_device(None, inspector, "tablet")
    db.session.commit()
    client, auth = FlaskClient(app), {"Authorization": f"Bearer {token}"}
    assert client.get("/sync/changes?cursor=0", headers=auth).status_code == 200
    assert client.post("/sync/push", json={"ops": []}, headers=auth).status_code == 200
    assert client.get("/sync/changes?cursor=0", headers=auth).status_code == 200
