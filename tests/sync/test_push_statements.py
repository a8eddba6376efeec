"""A push's SQL statements do not grow with how many permits its operations touch, nor with how many
operations are applied together (issue 18: sync push speed): the areas of a batch are read with their
permits' assignments in the prefetch, and a run's answers and audit entries are written in one statement each."""
from __future__ import annotations

from sqlalchemy import event

from inspect_app.extensions import db
from inspect_app.types import utcnow
from sync.client import new_op


def push_statements(client, token: str, areas) -> int:
    """The SQL statements one push of an area status change per area runs (every op applied)."""
    ops = [new_op("area.status", area.id, {"status": "activity_ceased", "at": utcnow().isoformat()}, 1)
           for area in areas]
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        statements.append(statement)

    event.listen(db.engine, "before_cursor_execute", seen)
    try:
        answer = client.post("/sync/push", json={"ops": ops}, headers={"Authorization": f"Bearer {token}"})
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)
    assert [r["status"] for r in answer.json["results"]] == ["applied"] * len(areas), answer.json
    return len(statements)


def test_a_push_does_not_query_once_per_permit(client, make, device_token):
    inspector = make.user("inspector")
    one_permit = make.permit(inspectors=[inspector], areas=[f"Pad {n}" for n in range(6)]).areas
    six_permits = [make.permit(inspectors=[inspector], areas=["Pad"]).areas[0] for _ in range(6)]
    warm = make.permit(inspectors=[inspector], areas=["Pad"]).areas
    db.session.commit()
    token = device_token(inspector)
    push_statements(client, token, warm)  # the first push also reads the device and its user
    db.session.expire_all()

    counts = (push_statements(client, token, one_permit), push_statements(client, token, six_permits))

    assert counts[0] == counts[1], f"{counts[0]} statements for 6 areas of one permit, {counts[1]} for six permits"


def test_a_push_does_not_query_once_per_operation(client, make, device_token):
    inspector = make.user("inspector")
    three = make.permit(inspectors=[inspector], areas=[f"Pad {n}" for n in range(3)]).areas
    twelve = make.permit(inspectors=[inspector], areas=[f"Pad {n}" for n in range(12)]).areas
    warm = make.permit(inspectors=[inspector], areas=["Pad"]).areas
    db.session.commit()
    token = device_token(inspector)
    push_statements(client, token, warm)
    db.session.expire_all()

    counts = (push_statements(client, token, three), push_statements(client, token, twelve))

    assert counts[0] == counts[1], f"{counts[0]} statements for 3 area changes, {counts[1]} for 12"


def test_a_device_request_reads_its_user_once(client, make, device_token):
    """A token's device and its user are read once per request: the user Flask-Login gets for the request is the
    one the token check read (the session keeps a row only while something holds it)."""
    inspector = make.user("inspector")
    make.permit(inspectors=[inspector], areas=["Pad"])
    db.session.commit()
    token = device_token(inspector)
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        statements.append(" ".join(statement.split()))

    event.listen(db.engine, "before_cursor_execute", seen)
    try:
        answer = client.get("/sync/changes?cursor=0", headers={"Authorization": f"Bearer {token}"})
    finally:
        event.remove(db.engine, "before_cursor_execute", seen)
    assert answer.status_code == 200, answer.json
    assert len([s for s in statements if s.startswith("SELECT users.")]) == 1, statements
