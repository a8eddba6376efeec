"""Who may sync: a device token (revocable by an admin) or the browser session with its CSRF token."""
from __future__ import annotations

import datetime as dt
import uuid

from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import new_id, utcnow
from sync.client import new_op
from sync.models import SyncDevice, SyncOperation
from sync.services import create_device


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def area_op(area, note: str = "") -> dict:
    return new_op("area.status", area.id, {"status": "activity_ceased", "at": utcnow().isoformat(), "note": note}, 1)


def test_without_a_token_or_session_nothing_is_read_or_written(client, make):
    area = make.permit(areas=["Pad"]).areas[0]
    assert client.post("/sync/push", json={"ops": [area_op(area)]}).status_code == 401
    assert client.get("/sync/changes").status_code == 401
    assert client.get("/sync/openapi.json").json["openapi"].startswith("3.1")
    assert db.session.scalar(select(func.count()).select_from(SyncOperation)) == 0


def test_a_session_push_needs_the_csrf_header(signed_in, make):
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    browser = signed_in(inspector)
    refused = browser.client.post("/sync/push", json={"ops": [area_op(area)]})
    assert refused.status_code == 400 and "CSRF" in refused.json["error"]
    assert db.session.scalar(select(func.count()).select_from(SyncOperation)) == 0
    accepted = browser.client.post("/sync/push", json={"ops": [area_op(area)]},
                                   headers={"X-CSRFToken": browser.token})
    assert accepted.json["results"][0]["status"] == "applied"


def test_an_admin_revokes_a_device_token(client, signed_in, make):
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    admin = signed_in(make.user("admin", town=None))
    made = admin.client.post("/sync/devices", json={"email": inspector.email, "name": "tablet 3"},
                             headers={"X-CSRFToken": admin.token})
    assert made.status_code == 201
    token = made.json["token"]
    assert "token_sha256" not in made.json
    assert client.get("/sync/permits", headers=bearer(token)).json["permits"][0]["id"] == area.permit_id
    # A device token syncs; it cannot make more tokens.
    assert client.post("/sync/devices", json={"email": inspector.email, "name": "x"},
                       headers=bearer(token)).status_code == 403
    revoked = admin.client.post(f"/sync/devices/{made.json['id']}/revoke", headers={"X-CSRFToken": admin.token})
    assert revoked.json["revoked_at"] is not None
    refused = client.post("/sync/push", json={"ops": [area_op(area)]}, headers=bearer(token))
    assert refused.status_code == 401 and "revoked" in refused.json["error"]
    assert db.session.get(DisturbedArea, area.id).revision == 1


def test_operations_outside_the_users_permits_tell_nothing_of_them(client, make, device_token):
    inspector, permittee = make.user("inspector"), make.user("permittee")
    mine = make.permit(inspectors=[inspector], owner=permittee, areas=["Pad"])
    other = make.permit(areas=["Elsewhere"])
    notice = new_op("notice.give", new_id(), {"permit_id": other.id, "inspection_type": "erosion_control",
                                          "planned_for": (utcnow() + dt.timedelta(hours=30)).isoformat()})
    answers = client.post("/sync/push", json={"ops": [area_op(other.areas[0]), notice]},
                          headers=bearer(device_token(inspector))).json["results"]
    # An area of a permit they do not see answers as an area not there (waiting for it), never "not yours".
    assert [a["status"] for a in answers] == ["waiting", "rejected"]
    assert answers[0]["waiting_for"] == {"record": other.areas[0].id}
    assert answers[1]["reasons"] == {"payload.permit_id": "No such permit, or you may not see it."}
    assert db.session.get(DisturbedArea, other.areas[0].id).revision == 1
    # A permittee sees the permit but may not record area status.
    answer = client.post("/sync/push", json={"ops": [area_op(mine.areas[0])]},
                         headers=bearer(device_token(permittee))).json["results"][0]
    assert answer["status"] == "rejected"
    assert db.session.get(DisturbedArea, mine.areas[0].id).revision == 1


def test_pull_gives_only_the_changes_and_snapshots_a_user_may_see(client, make, device_token):
    inspector = make.user("inspector")
    mine = make.permit(inspectors=[inspector], areas=["Pad"], structures=["P-1"])
    other = make.permit(areas=["Elsewhere"])
    token = device_token(inspector)
    page = client.get("/sync/changes?cursor=0&limit=2", headers=bearer(token)).json
    assert page["more"] is True and len(page["changes"]) == 2
    seen, cursor = list(page["changes"]), page["cursor"]
    while page["more"]:
        page = client.get(f"/sync/changes?cursor={cursor}&limit=2", headers=bearer(token)).json
        seen += page["changes"]
        cursor = page["cursor"]
    assert {c["permit_id"] for c in seen} == {mine.id}
    assert {"permit.create", "area.create", "structure.create"} <= {c["action"] for c in seen}
    snap = client.get(f"/sync/permits/{mine.id}/snapshot", headers=bearer(token)).json
    assert [a["name"] for a in snap["areas"]] == ["Pad"] and snap["structures"][0]["name"] == "P-1"
    assert {t["key"] for t in snap["checklists"]} >= {"erosion_control", "pre_bury", "final"}
    assert all("password_hash" not in p for p in snap["people"])
    assert client.get(f"/sync/permits/{other.id}/snapshot", headers=bearer(token)).status_code == 404


def test_a_page_cached_hours_ago_gets_a_fresh_csrf_token_from_the_session(signed_in, make):
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    browser = signed_in(inspector)
    answer = browser.client.get("/sync/session")
    assert answer.status_code == 200 and answer.headers["Cache-Control"] == "no-store"
    assert answer.json["user"]["email"] == inspector.email and "password_hash" not in answer.json["user"]
    pushed = browser.client.post("/sync/push", json={"ops": [area_op(area)]},
                                 headers={"X-CSRFToken": answer.json["csrf_token"]})
    assert pushed.json["results"][0]["status"] == "applied"

    browser.post("/logout")  # the session ends (as when it expires): the outbox must ask to sign in again
    answer = browser.client.get("/sync/session")
    assert answer.status_code == 401 and answer.json["user"] is None and answer.json["csrf_token"]
    refused = browser.client.post("/sync/push", json={"ops": [area_op(area)]},
                                  headers={"X-CSRFToken": answer.json["csrf_token"]})
    assert refused.status_code == 401 and "Sign in" in refused.json["error"]


def test_every_sync_endpoint_answers_401_json_never_the_login_page(app, client):
    checked = 0
    for rule in app.url_map.iter_rules():
        if not rule.endpoint.startswith("sync.") or rule.endpoint == "sync.openapi":
            continue
        url = rule.build({name: "0" * 64 for name in rule.arguments})[1]
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            answer = client.open(url, method=method, json={})
            assert answer.status_code == 401, (method, url)
            assert answer.is_json and answer.json["error"], (method, url)
            assert "Location" not in answer.headers
            checked += 1
    assert checked >= 14  # push, ops, changes, permits, snapshot, blobs (3), devices (3), conflicts (2), session


def test_an_op_id_another_account_used_reads_back_nothing_of_theirs(client, make, device_token):
    """An op_id is the device's own UUID, but /sync/conflicts shows those of a permit's conflicts: another
    account sending one again is refused, and is not given the first account's stored answer."""
    first, second = make.user("inspector"), make.user("inspector")
    area = make.permit(inspectors=[first, second], areas=["Pad"]).areas[0]
    op = area_op(area, note="first inspector's note")
    applied = client.post("/sync/push", json={"ops": [op]}, headers=bearer(device_token(first))).json["results"][0]
    assert applied["status"] == "applied"

    again = {**op, "payload": {**op["payload"], "status": "stabilization_initiated"}, "base_revision": 2}
    answer = client.post("/sync/push", json={"ops": [again]}, headers=bearer(device_token(second))).json["results"][0]
    assert answer["status"] == "rejected" and "op_id" in answer["reasons"] and "original" not in answer
    assert set(answer) == {"op_id", "status", "record_id", "reasons"}
    db.session.expire_all()
    assert db.session.get(DisturbedArea, area.id).revision == 2
    assert db.session.scalar(select(func.count()).select_from(SyncOperation)) == 1
    # The first account's own resend is still answered from its stored result.
    replay = client.post("/sync/push", json={"ops": [op]}, headers=bearer(device_token(first))).json["results"][0]
    assert replay["status"] == "duplicate" and replay["original"]["status"] == "applied"


def test_a_device_request_that_is_not_a_json_object_is_refused_in_words(app, signed_in, make):
    """A JSON list, string or number posted to make a device token was a 500 ("send it again")."""
    admin = signed_in(make.user("admin", town=None))
    app.config["PROPAGATE_EXCEPTIONS"] = False
    for body in ([1], "x", 5, None):
        answer = admin.client.post("/sync/devices", json=body, headers={"X-CSRFToken": admin.token})
        assert answer.status_code == 422 and "JSON object" in answer.json["error"], (body, answer.status_code)
    assert db.session.scalar(select(func.count()).select_from(SyncDevice)) == 0


def test_a_town_admin_stops_a_token_it_made_after_its_engineer_also_works_in_another_town(client, signed_in, make):
    """The tablet is lost. Its token reaches only Longmeadow's permits (the town admin made it), but its
    engineer was put on a Southborough permit since, so Longmeadow's admin no longer manages the account: the
    token was not listed, revoking it was a 404, and it went on reading and writing Longmeadow's permits."""
    engineer = make.user("inspector")
    area = make.permit("longmeadow", inspectors=[engineer], areas=["Pad"]).areas[0]
    admin = signed_in(make.user("admin", town="longmeadow"))
    made = admin.client.post("/sync/devices", json={"email": engineer.email, "name": "tablet 3"},
                             headers={"X-CSRFToken": admin.token})
    token, device_id = made.json["token"], made.json["id"]
    make.permit("southborough", inspectors=[engineer])
    assert device_id in {d["id"] for d in admin.get("/sync/devices").json["devices"]}
    revoked = admin.client.post(f"/sync/devices/{device_id}/revoke", headers={"X-CSRFToken": admin.token})
    assert revoked.status_code == 200 and revoked.json["revoked_at"] is not None
    assert client.post("/sync/push", json={"ops": [area_op(area)]}, headers=bearer(token)).status_code == 401
    # Southborough's admin neither sees nor stops a token that reaches only Longmeadow.
    other = signed_in(make.user("admin", town="southborough"))
    assert device_id not in {d["id"] for d in other.get("/sync/devices").json["devices"]}
    assert other.client.post(f"/sync/devices/{device_id}/revoke",
                             headers={"X-CSRFToken": other.token}).status_code == 404


def test_an_operation_sent_with_its_id_in_upper_case_is_found_by_it(client, make, device_token):
    """docs/sync.md: ids are compared in lower case. A push did (its resend is a duplicate); asking for the
    operation's answer with the id as sent was "No operation with that id from you"."""
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    token = device_token(inspector)
    op = area_op(area) | {"op_id": str(uuid.uuid4()).upper()}
    assert client.post("/sync/push", json={"ops": [op]}, headers=bearer(token)).json["results"][0]["status"] == \
        "applied"
    asked = client.get(f"/sync/ops/{op['op_id']}", headers=bearer(token))
    assert asked.status_code == 200 and asked.json["status"] == "applied"
    assert client.get("/sync/ops/not-an-id", headers=bearer(token)).status_code == 404


def test_a_device_clock_far_off_is_answered_in_words_and_changes_nothing(client, make, device_token):
    """Three pushes were 500s on PostgreSQL, each sent again for ever by the device: a device time of 42
    characters (an offset with seconds: the column holds 40); a clock more than 68 years off (its offset in
    seconds is a 32-bit number); and a time that, moved by the clock's error, fell outside the years the app
    takes (a report submitted as made in 1868)."""
    inspector = make.user("inspector")
    area = make.permit(inspectors=[inspector], areas=["Pad"]).areas[0]
    token = device_token(inspector)
    long_time = area_op(area) | {"device_time": "2026-06-03T13:58:00.123456+00:00:00.123456"}
    answer = client.post("/sync/push", json={"ops": [long_time]}, headers=bearer(token))
    assert answer.status_code == 422 and "at most 40 characters" in answer.json["problems"][0]["reasons"]["device_time"]
    answer = client.post("/sync/push", json={"sent_at": "2100-01-01T00:00:00+00:00", "ops": [area_op(area)]},
                         headers=bearer(token))
    assert answer.status_code == 400 and "more than 68 years" in answer.json["error"]
    moved = new_op("area.status", area.id, {"status": "activity_ceased", "at": "1901-01-02T00:00:00+00:00"}, 1)
    answer = client.post("/sync/push", json={"sent_at": "2060-01-01T00:00:00+00:00", "ops": [moved]},
                         headers=bearer(token))
    assert answer.status_code == 200
    result = answer.json["results"][0]
    assert result["status"] == "rejected" and "Set the device's date and time" in result["reasons"]["payload.at"]
    db.session.expire_all()
    assert db.session.get(DisturbedArea, area.id).revision == 1


def test_a_token_stopped_by_disabling_its_account_stays_stopped_when_the_account_is_enabled_again(client, make,
                                                                                                  runner):
    """`flask users disable`: "every session and device of it stops working". A lost tablet, the reason to disable
    the account, must not read or push again once the account is enabled; the devices list says it was revoked."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Pad"])
    device, token = create_device(None, inspector, "lost tablet")
    db.session.commit()
    assert client.get("/sync/permits", headers=bearer(token)).json["permits"][0]["id"] == permit.id

    assert runner.invoke(args=["users", "disable", "--email", inspector.email]).exit_code == 0
    assert client.get("/sync/permits", headers=bearer(token)).status_code == 401
    assert runner.invoke(args=["users", "enable", "--email", inspector.email]).exit_code == 0

    assert client.get("/sync/permits", headers=bearer(token)).status_code == 401
    assert client.post("/sync/push", json={"ops": [area_op(permit.areas[0])]}, headers=bearer(token)).status_code == 401
    db.session.expire_all()
    assert db.session.get(SyncDevice, device.id).revoked_at is not None
