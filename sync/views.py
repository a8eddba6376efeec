"""The sync API (docs/sync.md): push, pull, snapshots, resumable blobs, device tokens, conflicts.

Every answer is JSON. A request is signed in either by the browser's session (then unsafe methods
need the CSRF token in the `X-CSRFToken` header) or by a device's bearer token (no cookie, so no
CSRF to forge; the token can be revoked by an admin).
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, abort, current_app, g, jsonify, request, session as cookie_session
from flask_login import current_user
from flask_wtf.csrf import CSRFError, generate_csrf
from sqlalchemy import or_, select
from werkzeug.exceptions import HTTPException

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import (allowed, limit_to_token, managed_users, manages, sees, sees_blob,
                                         sees_part, visible_permits)
from inspect_app.audit import services as audit
from inspect_app.blobs.store import BlobError, HashMismatch, OffsetMismatch, check_sha
from inspect_app.blobs.uploads import UploadRefused
from inspect_app.extensions import csrf, db
from inspect_app.inputs import query_int
from inspect_app.permits.models import Permit
from inspect_app.types import canonical_uuid, utcnow

from sync import cli, services
from sync.models import SyncConflict, SyncDevice, SyncOperation
from sync.openapi import OPENAPI

bp = Blueprint("sync", __name__, url_prefix="/sync", cli_group="sync")
# CSRF is checked below for session requests only; a bearer token is not sent by the browser on its own.
csrf.exempt(bp)
for _command in cli.COMMANDS:
    bp.cli.add_command(_command)
PUBLIC_ENDPOINTS = {"sync.openapi", "sync.session"}


@bp.before_request
def authenticate():
    """Sign the request in by device token, or check the session's CSRF token on unsafe methods."""
    g.sync_device = None
    limit_to_token(None)
    header = request.headers.get("Authorization", "")
    if header.lower().startswith("bearer "):
        found = services.device_for_token(header[7:].strip())
        if found is None:
            return _error(401, "The device token is unknown or has been revoked.")
        device, g._login_user = found  # the user is Flask-Login's for this request only
        g.sync_device = device
        limit_to_token(device)
        return None
    if request.endpoint in PUBLIC_ENDPOINTS:
        return None
    if not current_user.is_authenticated:
        return _error(401, "Sign in, or send a device token as 'Authorization: Bearer <token>'.")
    if current_app.config.get("WTF_CSRF_ENABLED", True):
        csrf.protect()
    return None


@bp.teardown_request
def _forget_token(error=None) -> None:
    # The token's limit is this request's alone, not that of whatever else runs in the same app context.
    g.pop("token_town", None)


@bp.get("/openapi.json")
def openapi():
    """The OpenAPI description of this API."""
    return jsonify(OPENAPI)


@bp.post("/push")
def push():
    """Apply a batch of operations, each exactly once, in order; one answer per operation."""
    body = _body(services.setting("SYNC_MAX_BODY_BYTES", services.MAX_BODY_BYTES))
    received_at = utcnow()
    try:
        ops, offset = services.parse_batch(body, received_at)
    except services.BatchError as error:
        return _error(error.status, str(error), problems=error.problems)
    device_id = g.sync_device.id if g.sync_device else None
    # The user itself, not the request-local proxy: a push reads it for every operation.
    results = services.push(current_user._get_current_object(), device_id, ops, offset)
    response = jsonify({"results": results, "received_at": received_at.isoformat()})
    stored = services.stored_inspections(ops, results)
    if stored:  # their weather is looked up once this answer is sent: a push never waits for it
        app = current_app._get_current_object()
        response.call_on_close(lambda: services.fill_weather(app, stored))
    return response


@bp.get("/session")
def session():
    """Who is signed in and a fresh CSRF token, for a page cached hours ago that is about to sync.

    Signed out (or the session expired): 401 with `user` null, like every other endpoint here, and the
    session's token if it has one. It never starts a session: the outbox asks while the sign-in page loads,
    and a second session cookie arriving after the page's own would void the token in its form (400).
    """
    signed_in = current_user.is_authenticated
    has_token = signed_in or current_app.config["WTF_CSRF_FIELD_NAME"] in cookie_session
    body = {"user": services.person(current_user) if signed_in else None,
            "csrf_token": generate_csrf() if has_token else None}
    if not signed_in:
        body["error"] = "Sign in again; what waits on this device is kept until then."
    return jsonify(body), 200 if signed_in else 401, {"Cache-Control": "no-store"}


@bp.get("/ops/<op_id>")
def operation(op_id: str):
    """The stored answer for one operation this user pushed."""
    try:  # ids are compared in lower case (docs/sync.md), as a push compares them
        row = db.session.get(SyncOperation, canonical_uuid(op_id))
    except ValueError:
        row = None
    if row is None or row.user_id != current_user.id:
        return _error(404, "No operation with that id from you.")
    return jsonify({"op_id": row.op_id, **row.result, "device_time": row.device_time,
                    "received_at": row.received_at.isoformat()})


@bp.get("/changes")
def changes():
    """The changes after a cursor to the permits this user may see, one page at a time."""
    cursor = query_int("cursor", 0, 0, 2**63 - 1)
    # Any whole number is taken and brought within 1..PAGE_SIZE; anything else is a 400.
    limit = min(max(query_int("limit", services.PAGE_SIZE, 0, 10**9), 1), services.PAGE_SIZE)
    return jsonify(services.changes(current_user, cursor, limit))


@bp.get("/permits")
def permits():
    """The permits this user may see (an inspector: those assigned), to choose what to hold offline."""
    rows = db.session.scalars(visible_permits(current_user).order_by(Permit.number))
    return jsonify({"permits": [{"id": p.id, "number": p.number, "site_address": p.site_address,
                                 "status": p.status, "revision": p.revision} for p in rows]})


@bp.get("/permits/<permit_id>/snapshot")
def snapshot(permit_id: str):
    """Everything needed to inspect one permit offline."""
    permit = db.session.get(Permit, permit_id)
    if permit is None or not allowed(current_user, "permit.view", permit):
        return _error(404, "No such permit, or you may not see it.")
    return jsonify(services.snapshot(permit, current_user))


@bp.route("/blobs/<sha>", methods=["GET", "HEAD"])
def blob_status(sha: str):
    """How many bytes of a blob the server holds, so an upload resumes from there."""
    _require_blob(sha)
    store = services.blob_store()
    try:
        received, complete = store.received(sha), store.exists(sha)
    except BlobError as error:
        return _error(400, str(error))
    response = jsonify({"sha256": sha, "received": received, "complete": complete})
    response.headers["Upload-Offset"] = str(received)
    return response


@bp.put("/blobs/<sha>")
def blob_chunk(sha: str):
    """Add a chunk at the offset given in the `Upload-Offset` header."""
    offset = request.headers.get("Upload-Offset", "")
    offset = int(offset) if offset.isascii() and offset.isdigit() and len(offset) < 19 else None
    if offset is None:
        return _error(400, "Send the chunk's starting byte in the Upload-Offset header.")
    _require_blob(sha)
    chunk = _body(services.setting("SYNC_MAX_CHUNK_BYTES", services.MAX_CHUNK_BYTES))
    store = services.blob_store()
    try:
        services.check_quota(current_user, sha, len(chunk))
        store.begin(sha)
        received = store.append(sha, offset, chunk)
        services.note_upload(current_user, sha, received)
    except OffsetMismatch as error:
        return _error(409, str(error), received=error.offset, headers={"Upload-Offset": str(error.offset)})
    except UploadRefused as error:
        return _error(error.status, str(error))
    except BlobError as error:
        return _error(400, str(error))
    return jsonify({"sha256": sha, "received": received}), 200, {"Upload-Offset": str(received)}


@bp.post("/blobs/<sha>/complete")
def blob_complete(sha: str):
    """Check the uploaded bytes against their SHA-256 and their declared type, and keep them."""
    _require_blob(sha)
    body = request.get_json(silent=True)
    content_type = body.get("content_type") if isinstance(body, dict) else None
    try:
        settled = services.complete_blob(current_user, sha, content_type if isinstance(content_type, str) else "")
    except UploadRefused as error:
        return _error(error.status, str(error))
    except HashMismatch as error:
        return _error(422, str(error), received=0)
    except BlobError as error:
        return _error(400, str(error))
    return jsonify({"sha256": sha, "complete": True, "operations_settled": settled})


@bp.get("/devices")
def devices():
    """Device tokens and whose they are, of the users this admin manages (a town's admin: its own)."""
    _require_session("users.manage")
    rows = db.session.scalars(select(SyncDevice).where(_stoppable_by(current_user)).order_by(SyncDevice.created_at))
    return jsonify({"devices": [_device(d) for d in rows]})


def _stoppable_by(admin):
    """SQL: the device tokens `admin` may list and revoke: those of the users it manages, and those that reach
    only its town (docs/sync.md: a town admin's token), whoever holds them. An engineer put on another
    town's permit since is no longer this town's to manage, but a lost tablet whose token still works here
    must be stoppable here."""
    managed = SyncDevice.user_id.in_(managed_users(admin).with_only_columns(User.id))
    town = admin.jurisdiction_id
    return or_(managed, SyncDevice.jurisdiction_id == town) if town else managed


@bp.post("/devices")
def create_device():
    """Make a device token for a user this admin manages; the token is in this answer only (admins)."""
    _require_session("users.manage")
    data = request.get_json(silent=True)
    if not isinstance(data, dict):  # a list, a string or a number is JSON too
        return _error(422, "Send a JSON object with the email of an existing user and a name for the device.")
    user = db.session.scalar(select(User).where(User.email == str(data.get("email", "")).strip().lower()))
    # Someone another town manages gets the same answer as nobody: an admin learns no other town's people.
    if user is None or not manages(current_user, user) or not str(data.get("name", "")).strip():
        return _error(422, "Give the email of an existing user and a name for the device.")
    device, token = services.create_device(current_user, user, str(data["name"]))
    db.session.commit()
    return jsonify({**_device(device), "token": token}), 201


@bp.post("/devices/<device_id>/revoke")
def revoke_device(device_id: str):
    """Stop a device token from working (admins, of the users they manage)."""
    _require_session("users.manage")
    device = db.session.scalar(select(SyncDevice).where(SyncDevice.id == device_id, _stoppable_by(current_user)))
    if device is None:
        abort(404)
    services.revoke_device(current_user, device)
    db.session.commit()
    return jsonify(_device(device))


@bp.get("/conflicts")
def conflicts():
    """Unresolved conflicts on the permits this user may see."""
    visible = visible_permits(current_user).with_only_columns(Permit.id).scalar_subquery()
    rows = db.session.scalars(select(SyncConflict).where(SyncConflict.resolved_at.is_(None),
                                                         SyncConflict.permit_id.in_(visible)))
    return jsonify({"conflicts": [audit.snapshot(c) for c in rows]})


@bp.post("/conflicts/<conflict_id>/resolve")
def resolve_conflict(conflict_id: str):
    """Mark a conflict as looked at; the area's flag goes when none of its conflicts is open."""
    conflict = db.get_or_404(SyncConflict, conflict_id)
    found = services.conflict_record(conflict)
    if found is None:
        abort(404)
    record, action = found
    permit = db.session.get(Permit, record.permit_id)
    if not sees(current_user, permit) or not sees_part(current_user, record):
        abort(404)  # another town's conflict: as for none
    if not allowed(current_user, action, permit):
        abort(403)
    services.resolve_conflict(current_user, conflict, record)
    db.session.commit()
    return jsonify(audit.snapshot(conflict))


def _require_uploader() -> None:
    # Photos, signatures and PDFs come from field roles (the permit is checked by the operation that
    # uses the blob); admins configure, they upload nothing.
    if not services.may_upload(current_user):
        abort(403, "Your role does not upload files.")


def _require_blob(sha: str) -> None:
    """An uploader, asking about a blob theirs to upload (a stored one they may not see: 404, as for none)."""
    _require_uploader()
    try:
        check_sha(sha)
    except BlobError as error:
        abort(400, str(error))
    if not sees_blob(current_user, sha):
        abort(404, "No upload of yours with that SHA-256.")


def _require_session(action: str) -> None:
    # Device tokens sync; they do not administer (a stolen tablet cannot mint more tokens).
    if g.sync_device is not None or not allowed(current_user, action):
        abort(403)


def _device(device: SyncDevice) -> dict[str, Any]:
    data = audit.snapshot(device)
    data.pop("token_sha256")
    return data


def _body(limit: int) -> bytes:
    """The request body, refused with 413 (before reading it) when larger than `limit`."""
    if request.content_length is not None and request.content_length > limit:
        abort(413, f"The body is {request.content_length} bytes; the limit is {limit}.")
    data = request.stream.read(limit + 1)
    if len(data) > limit:
        abort(413, f"The body is larger than the limit of {limit} bytes.")
    return data


def _error(status: int, message: str, headers: dict[str, str] | None = None, **extra: Any):
    return jsonify({"error": message, **extra}), status, headers or {}


def _http_error(error: HTTPException):
    return _error(error.code or 500, error.description or error.name)


for _code in (400, 401, 403, 404, 405, 409, 413, 415, 422):
    bp.register_error_handler(_code, _http_error)
bp.register_error_handler(CSRFError, _http_error)


@bp.errorhandler(500)
def _server_error(error):
    return _error(500, "The server failed on this request; nothing of it was lost: send it again.")
