"""Push, pull, blobs and device tokens: the server side of the sync protocol (docs/sync.md).

A push is applied in one transaction per `SYNC_COMMIT_EVERY` operations. The operations' rows are
inserted first (`_claim_all`): their primary key is the id the device made, so a replay (even one racing
on another connection) inserts nothing and is answered with the stored result instead of being applied
twice. Then each operation is applied whole or not at all: operations in a row share a SAVEPOINT while
they go through, and one that is refused, waits or collides ends up in a SAVEPOINT of its own
(`_apply_run`). The row, the change and its answer commit together or not at all.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import secrets
import time
from typing import Any

from flask import current_app
from pydantic import ValidationError
from sqlalchemy import (JSON, BigInteger, Integer, String, and_, any_, bindparam, cast, delete, func, null, or_, select,
                        update)
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import (allowed, hidden_draft_parts, limited_to_token, shown, token_town,
                                         visible_permits)
from inspect_app.accounts.services import account_disabled, password_changed, user_by_id
from inspect_app.blobs import files
from inspect_app.audit import services as audit
from inspect_app.audit.models import AuditEntry
from inspect_app.blobs.store import BlobStore
from inspect_app.blobs.uploads import UPLOAD_TYPES, UploadRefused, upload_type
from inspect_app import inputs
from inspect_app.extensions import begin_write, db
from inspect_app.fields import FIRST_YEAR, LAST_YEAR, in_calendar
from inspect_app.inspections.models import CorrectiveAction, Finding, Inspection, InspectionNotice, PunchListItem
from inspect_app.inspections import weather
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.blobs.models import Blob, BlobUpload
from inspect_app.stabilization.models import DisturbedArea
from inspect_app.types import canonical_uuid, utcnow

from sync.models import SyncConflict, SyncDevice, SyncOperation
from sync.operations import KINDS, Context, Duplicate, Op, Rejected, Waiting

MAX_OPS = 1000
MAX_BODY_BYTES = 4 * 1024 * 1024
MAX_CHUNK_BYTES = 8 * 1024 * 1024
MAX_BLOB_BYTES = 512 * 1024 * 1024
PAGE_SIZE = 500
MAX_REVISION = 2**31 - 1  # revisions are 32-bit integer columns
COMMIT_EVERY = 200
BACKFILL_LIMIT = 3
# Records that can conflict, by table: their model and who may reconcile them.
CONFLICT_ENTITIES: dict[str, tuple[type, str]] = {
    "disturbed_areas": (DisturbedArea, "area.edit"),
    "corrective_actions": (CorrectiveAction, "action.close"),
}
# What the operations' rows hold: the device's time as sent (String(40)), its clock's offset in seconds (Integer).
DEVICE_TIME_LENGTH = 40
MAX_CLOCK_OFFSET_S = 2**31 - 1
_OP_FIELDS = {"op_id", "kind", "record_id", "base_revision", "device_time", "payload"}
# The years a time sent may be in (inspect_app.fields), in words.
YEARS = f"between {FIRST_YEAR} and {LAST_YEAR}"


class BatchError(ValueError):
    """The batch as a whole is refused (nothing applied); `status` is the HTTP status to answer."""

    def __init__(self, status: int, message: str, problems: list[dict[str, Any]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.problems = problems or []


def setting(name: str, default: Any) -> Any:
    return current_app.config.get(name, default)


def blob_store() -> BlobStore:
    """The app's blob store."""
    return files.blob_store(max_bytes=setting("SYNC_MAX_BLOB_BYTES", MAX_BLOB_BYTES))


# --- push ----------------------------------------------------------------------------------------

def parse_batch(body: bytes, now: dt.datetime) -> tuple[list[Op], dt.timedelta]:
    """The operations of a push body and the device clock's offset; BatchError if anything is wrong."""
    try:
        batch = inputs.loads(body)
    except (UnicodeDecodeError, ValueError) as error:
        raise BatchError(400, f"The body is not valid JSON: {error}.") from None
    if not isinstance(batch, dict) or not isinstance(batch.get("ops"), list):
        raise BatchError(400, 'The body must be a JSON object with a list "ops".')
    unknown = set(batch) - {"ops", "sent_at"}
    if unknown:
        raise BatchError(400, f"Unknown fields in the batch: {', '.join(sorted(unknown))}.")
    if len(batch["ops"]) > setting("SYNC_MAX_OPS", MAX_OPS):
        raise BatchError(413, f"A batch holds at most {setting('SYNC_MAX_OPS', MAX_OPS)} operations; "
                              f"this one has {len(batch['ops'])}. Send it in smaller batches.")
    offset = dt.timedelta(0)
    if batch.get("sent_at") is not None:
        sent_at = _aware_time(batch["sent_at"])
        if sent_at is None:
            raise BatchError(400, f'"sent_at" must be an ISO 8601 time with its UTC offset, {YEARS}.')
        offset = now - sent_at
        if abs(offset.total_seconds()) > MAX_CLOCK_OFFSET_S:  # stored as a 32-bit number of seconds
            raise BatchError(400, '"sent_at" is more than 68 years from the server\'s clock: set the device\'s '
                                  'date and time, then send again.')
    ops, problems, seen = [], [], set()
    for index, raw in enumerate(batch["ops"]):
        op, reasons = _parse_op(raw)
        if op is not None and op.op_id in seen:
            reasons = {"op_id": "The same op_id appears twice in this batch."}
        if reasons:
            problems.append({"index": index, "op_id": raw.get("op_id") if isinstance(raw, dict) else None,
                             "reasons": reasons})
        else:
            seen.add(op.op_id)
            ops.append(op)
    if problems:
        raise BatchError(422, f"{len(problems)} operation(s) are malformed; nothing was applied.", problems)
    return ops, offset


def _parse_op(raw: Any) -> tuple[Op | None, dict[str, str]]:
    """One operation checked for shape and types, with field-level reasons when it is wrong.

    Ids come out in their one text form (`canonical_uuid`), so an id resent in upper case is the same.
    An operation whose only fault is a NUL character somewhere is not malformed: it is answered
    `rejected` on its own (`Op.refused`), so the rest of the batch is applied and the outbox moves on.
    """
    if not isinstance(raw, dict):
        return None, {"": "An operation must be a JSON object."}
    reasons = {f: "Unknown field." for f in set(raw) - _OP_FIELDS}
    reasons |= {f: "Required." for f in _OP_FIELDS - set(raw) - {"base_revision"}}
    op_id, kind, record_id = _uuid(raw.get("op_id")), raw.get("kind"), _uuid(raw.get("record_id"))
    if "op_id" in raw and op_id is None:
        reasons["op_id"] = "Must be a UUID made on the device, as text."
    if "kind" in raw and not (isinstance(kind, str) and kind in KINDS):
        reasons["kind"] = f"Unknown kind {str(kind)[:40]!r}; known kinds: {', '.join(sorted(KINDS))}."
        kind = None
    if "record_id" in raw and record_id is None:
        reasons["record_id"] = "Must be the record's id: a UUID, as text."
    base = raw.get("base_revision")
    if base is not None and (type(base) is not int or not 1 <= base <= MAX_REVISION):
        reasons["base_revision"] = f"Must be a whole number from 1 to {MAX_REVISION}, or null."
    if "device_time" in raw and (_aware_time(raw["device_time"]) is None
                                 or len(raw["device_time"]) > DEVICE_TIME_LENGTH):
        reasons["device_time"] = (f"Must be an ISO 8601 time with its UTC offset, {YEARS}, in at most "
                                  f"{DEVICE_TIME_LENGTH} characters.")
    payload, model = raw.get("payload"), None
    if "payload" in raw and not isinstance(payload, dict):
        reasons["payload"] = "Must be a JSON object."
    elif isinstance(payload, dict) and kind in KINDS:
        try:
            model = KINDS[kind].payload.model_validate(payload)
        except ValidationError as error:
            for problem in error.errors():
                where = ".".join(str(p) for p in problem["loc"])
                reasons[f"payload.{where}" if where else "payload"] = problem["msg"]
    nul = inputs.nul_fields(payload, "payload") if isinstance(payload, dict) else []
    if reasons:
        if nul and op_id is not None and set(reasons) <= set(nul):
            reasons = {}  # the NUL is the fault: answered on its own below
        else:
            return None, reasons
    refused = {path: "Contains a NUL character (\\0), which cannot be stored." for path in nul}
    return Op(op_id, kind, record_id, base, raw["device_time"], payload, model, refused=refused or None), {}


def _uuid(value: Any) -> str | None:
    try:
        return canonical_uuid(value)
    except ValueError:
        return None


def push(user, device_id: str | None, ops: list[Op], clock_offset: dt.timedelta) -> list[dict[str, Any]]:
    """Apply each operation once, in order; the answer for each, in the same order.

    One transaction per `SYNC_COMMIT_EVERY` operations (200). An operation that is refused or waits
    leaves nothing of its own behind (see `_apply_run`), and each answer is stored in the same
    transaction as every other change, so an answer is never stored without its change (nor a change
    without its answer).
    """
    ctx = Context(user=user, device_id=device_id, clock_offset=clock_offset, blobs=blob_store())
    stored = _stored_ops([op.op_id for op in ops])
    every = max(1, int(setting("SYNC_COMMIT_EVERY", COMMIT_EVERY)))
    answers: list[dict[str, Any]] = []
    session = db.session()
    # Keep what was loaded (the user, their permits) across the batch's commits; records an operation
    # changes are re-read with populate_existing and locked (see operations._locked).
    session.expire_on_commit = False
    try:
        for start in range(0, max(len(ops), 1), every):
            answers.extend(_push_transaction(ctx, ops[start:start + every], stored,
                                             first=start == 0, last=start + every >= len(ops)))
            db.session.commit()
    except BaseException:
        db.session.rollback()  # the operations of this transaction were not stored: a resend applies them
        raise
    finally:
        session.expire_on_commit = True
    return answers


def _push_transaction(ctx: Context, chunk: list[Op], stored: dict[str, Any], first: bool,
                      last: bool) -> list[dict[str, Any]]:
    """The answers to one transaction's operations, applied in order (the caller commits)."""
    begin_write()
    ctx.locked.clear()  # a new transaction: nothing is locked yet
    if first:
        _retry_waiting(user_id=ctx.user.id)  # what they waited for may have come since
    answers: list[dict[str, Any]] = []
    _prefetch(ctx, [op for op in chunk if op.op_id not in stored])
    claimed = _claim_all(ctx, [op for op in chunk if op.op_id not in stored and not op.refused])
    run: list[Op] = []  # new operations claimed here, in a row: applied together (see _apply_run)
    for op in chunk:
        if op.op_id in claimed:
            run.append(op)
            continue
        answers.extend(_apply_run(ctx, run))
        run = []
        row = stored.get(op.op_id)
        if row is None and op.refused:
            answers.append({"op_id": op.op_id, "status": "rejected", "record_id": op.record_id,
                            "reasons": op.refused})  # not stored: it can hold no NUL
        elif row is None:
            answers.append(_answer_stored(op, ctx.user.id))  # stored since we looked: a replay racing us
        elif row.user_id != ctx.user.id:
            answers.append(_taken(op))
        elif row.status == "waiting":
            answers.append(_retry_one(op.op_id) or _answer_stored(op, ctx.user.id))
        else:
            answers.append(_duplicate(op.op_id, row.result))
    answers.extend(_apply_run(ctx, run))
    if last:
        _retry_waiting(user_id=ctx.user.id)  # this batch may have brought a record an earlier op waited for
    return answers


def _prefetch(ctx: Context, ops: list[Op]) -> None:
    """Let each kind read what its operations in this transaction need, in a few queries."""
    for name, kind in KINDS.items():
        mine = [op for op in ops if op.kind == name]
        if mine and kind.prefetch is not None:
            kind.prefetch(ctx, mine)


# Built once: the statements run for every operation pushed, so they are compiled once (cached) too.
_CLAIM_SQLITE = sqlite.insert(SyncOperation.__table__).on_conflict_do_nothing(index_elements=["op_id"])
_CLAIM_SQLITE_RETURNING = _CLAIM_SQLITE.returning(SyncOperation.__table__.c.op_id)
_SETTLE = (update(SyncOperation.__table__).where(SyncOperation.__table__.c.op_id == bindparam("key"))
           .values(status=bindparam("status"), result=bindparam("result"), settled_at=bindparam("settled_at")))
# The columns an operation brings itself, with their types as arrays: on PostgreSQL a transaction's rows go
# in as one array per column, unnested into rows by the server (`_claim_statement_postgresql`).
_OP_COLUMNS = {"op_id": String, "arrival": BigInteger, "kind": String, "record_id": String,
               "base_revision": Integer, "device_time": String, "payload": JSON}


def _claim_statement_postgresql():
    """INSERT … SELECT FROM unnest(<one array per column>) ON CONFLICT DO NOTHING RETURNING op_id.

    One short statement whatever the number of rows: psycopg prepares it once, where a multi-row VALUES
    of some 3,000 parameters was parsed afresh for every transaction (and plain executemany tells no
    count of rows inserted, so which rows were ours needed that statement as well).
    """
    table = SyncOperation.__table__
    rows = func.unnest(*(cast(bindparam(name, type_=postgresql.ARRAY(kind)), postgresql.ARRAY(kind))
                         for name, kind in _OP_COLUMNS.items())).table_valued(*_OP_COLUMNS).render_derived()
    shared = {name: bindparam(name, type_=table.c[name].type)
              for name in ("clock_offset_s", "user_id", "device_id", "received_at", "status", "result")}
    source = (select(*(rows.c[name] for name in _OP_COLUMNS), *shared.values(), null())
              .order_by(rows.c.op_id))  # in id order: see `_claim_all`
    columns = [*_OP_COLUMNS, *shared, "settled_at"]
    return (postgresql.insert(table).from_select(columns, source)
            .on_conflict_do_nothing(index_elements=["op_id"]).returning(table.c.op_id))


_CLAIM_POSTGRESQL = _claim_statement_postgresql()
_OP_IDS = cast(bindparam("op_ids", type_=postgresql.ARRAY(String)), postgresql.ARRAY(String))


def _stored_ops(op_ids: list[str]) -> dict[str, Any]:
    """The stored rows of those of `op_ids` already here, by id: a replay is answered from them."""
    found: dict[str, Any] = {}
    columns = select(SyncOperation.op_id, SyncOperation.status, SyncOperation.result, SyncOperation.user_id)
    if db.session.get_bind().dialect.name == "postgresql":  # one array, one prepared statement
        rows = db.session.execute(columns.where(SyncOperation.op_id == any_(_OP_IDS)), {"op_ids": op_ids})
        return {row.op_id: row for row in rows}
    for start in range(0, len(op_ids), 500):
        rows = db.session.execute(columns.where(SyncOperation.op_id.in_(op_ids[start:start + 500])))
        found |= {row.op_id: row for row in rows}
    return found


def _apply_run(ctx: Context, run: list[Op]) -> list[dict[str, Any]]:
    """Apply claimed operations in order, each applied whole or not at all; their answers, in order.

    A SAVEPOINT per operation costs a flush and two statements each. So a run is first tried in one
    SAVEPOINT: if every operation in it is applied (or conflicts, which is stored too), the run stands
    as if each had had its own. If one is refused, waits or collides, the whole run is rolled back,
    split in two and each half tried again the same way, down to single operations in a SAVEPOINT of
    their own (`_apply_claimed`). The appliers read only the database, so each operation meets the same
    state, and gets the same answer, as it would have alone.
    """
    if len(run) <= 1:
        return [_apply_claimed(ctx, op) for op in run]
    session = db.session()
    work = session.begin_nested()
    try:
        settled = []
        for op in run:
            # Kinds whose appliers allow it let their changes wait for this SAVEPOINT's flush.
            session.info[audit.DEFER_FLUSH] = KINDS[op.kind].defer_flush
            status, result = _run(ctx, op)
            if status == "applied" and isinstance(result.get("revision"), int):
                ctx.made.setdefault((op.kind, op.record_id), set()).add(result["revision"])
            settled.append(_answer(op.op_id, op.record_id, status, result))
        session.info.pop(audit.DEFER_FLUSH, None)
        _store_answers([row for _, row in settled])  # the run's answers in one statement
        work.commit()  # flushes what waited; an IntegrityError from it is caught below like any other
        return [answer for answer, _ in settled]
    except (Rejected, Waiting, Duplicate, IntegrityError):
        if work.is_active:
            work.rollback()
        # A record the run made and another read back (a report's finding, in its PDF) can stay in the session
        # as if stored: expired, it is read again, and a retried operation finds it gone and makes it anew.
        session.expire_all()
        ctx.locked.clear()  # a lock taken inside a savepoint goes with it on PostgreSQL
        ctx.made.clear()  # and the revisions made in it
    finally:
        session.info.pop(audit.DEFER_FLUSH, None)
    half = len(run) // 2
    return _apply_run(ctx, run[:half]) + _apply_run(ctx, run[half:])


def _apply_claimed(ctx: Context, op: Op) -> dict[str, Any]:
    """Apply one claimed op in a SAVEPOINT of its own, store its answer."""
    for _attempt in range(3):
        try:
            status, result = _attempt_op(ctx, op)
        except IntegrityError:  # a race on another unique key (a blob row, a device id): try it again
            continue
        return _settle(op.op_id, op.record_id, status, result)
    raise RuntimeError(f"operation {op.op_id} kept colliding with concurrent writes")


def _claim_all(ctx: Context, ops: list[Op]) -> set[str]:
    """Insert the operations' rows, in one statement (their answers are written later in this
    transaction); the ids inserted. An id already stored is not: it is answered from its row.

    ON CONFLICT DO NOTHING: a replay racing on another connection waits for that transaction to end,
    then inserts nothing. The rows go in in id order, so two pushes claiming some of the same ids take
    them in the same order and cannot deadlock; `arrival` keeps the order they were sent in.
    """
    if not ops:
        return set()
    first = time.time_ns()
    own = [{**{name: getattr(op, name) for name in _OP_COLUMNS if name != "arrival"}, "arrival": first + index}
           for index, op in enumerate(ops)]
    shared = {"clock_offset_s": round(ctx.clock_offset.total_seconds()), "user_id": ctx.user.id,
              "device_id": ctx.device_id, "received_at": utcnow(), "status": "waiting", "result": {}}
    if db.session.get_bind().dialect.name == "postgresql":
        arrays = {name: [row[name] for row in own] for name in _OP_COLUMNS}
        return set(db.session.execute(_CLAIM_POSTGRESQL, arrays | shared).scalars())  # no row on a conflict
    rows = [row | shared | {"settled_at": None} for row in sorted(own, key=lambda row: row["op_id"])]
    # SQLite: without RETURNING first, as one short statement run for each row. As many rows inserted as
    # sent: all are ours. Fewer: a replay racing on another connection took some since `_stored_ops`
    # looked, and RETURNING tells which are ours.
    attempt = db.session.begin_nested()
    if db.session.execute(_CLAIM_SQLITE, rows).rowcount == len(rows):
        attempt.commit()
        return {row["op_id"] for row in rows}
    attempt.rollback()
    return set(db.session.execute(_CLAIM_SQLITE_RETURNING, rows).scalars())  # no row on a conflict


def _attempt_op(ctx: Context, op: Op) -> tuple[str, dict[str, Any]]:
    """Run the operation's applier in a SAVEPOINT of its own; rolled back unless it was applied."""
    work = db.session.begin_nested()
    try:
        status, result = _run(ctx, op)
        work.commit()
    except (Rejected, Waiting, Duplicate) as outcome:
        work.rollback()
        ctx.locked.clear()  # a lock taken inside a savepoint goes with it on PostgreSQL
        ctx.made.clear()  # and the revisions made in it
        return _outcome(outcome)
    except IntegrityError:
        if work.is_active:
            work.rollback()
        ctx.locked.clear()
        raise
    return status, result


def _run(ctx: Context, op: Op) -> tuple[str, dict[str, Any]]:
    kind = KINDS[op.kind]
    payload = op.model if op.model is not None else kind.payload.model_validate(op.payload)
    return kind.apply(ctx, op, payload)


def _outcome(error: Rejected | Waiting | Duplicate) -> tuple[str, dict[str, Any]]:
    if isinstance(error, Waiting):
        return "waiting", {"waiting_for": error.waiting_for}
    if isinstance(error, Duplicate):
        return "duplicate", error.original
    return "rejected", {"reasons": error.reasons}


def _stored_result(record_id: str, status: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"status": status, "record_id": record_id, **result}


def _settle(op_id: str, record_id: str, status: str, result: dict[str, Any]) -> dict[str, Any]:
    """Store the operation's answer and give it."""
    answer, row = _answer(op_id, record_id, status, result)
    _store_answers([row])
    return answer


def _answer(op_id: str, record_id: str, status: str, result: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The operation's answer, and its row's new values (for `_store_answers`).

    `duplicate` (the record it makes was already made) is stored as the first operation's answer, so
    the answer to a replay of this one is the same as its first answer.
    """
    if status == "duplicate":
        stored, answer = result, _duplicate(op_id, result)
    else:
        stored = _stored_result(record_id, status, result)
        answer = {"op_id": op_id, **stored}
    return answer, {"key": op_id, "status": stored["status"], "result": stored,
                    "settled_at": None if stored["status"] == "waiting" else utcnow()}


def _store_answers(rows: list[dict[str, Any]]) -> None:
    """Write operations' answers to their rows, in one statement.

    On the session's connection, in its transaction: the rows need no flush of the ORM's pending
    changes first (they go with the next flush, before the savepoint or transaction ends).
    """
    if rows:
        db.session.connection().execute(_SETTLE, rows)


def _answer_stored(op: Op, user_id: str) -> dict[str, Any]:
    row = db.session.execute(select(SyncOperation.status, SyncOperation.result, SyncOperation.user_id)
                             .where(SyncOperation.op_id == op.op_id)).one()
    if row.user_id != user_id:
        return _taken(op)
    if row.status == "waiting":
        return {"op_id": op.op_id, **row.result}
    return _duplicate(op.op_id, row.result)


def _taken(op: Op) -> dict[str, Any]:
    """The answer to an op_id another account's operation already has: refused, and nothing of theirs said (an
    op_id is the device's own UUID; one shown elsewhere, on /sync/conflicts, must not read back their answer)."""
    return {"op_id": op.op_id, "status": "rejected", "record_id": op.record_id,
            "reasons": {"op_id": "Another account's operation has this op_id: make a new one."}}


def _duplicate(op_id: str, original: dict[str, Any]) -> dict[str, Any]:
    return {"op_id": op_id, "status": "duplicate", "original": original}


def _retry_one(op_id: str) -> dict[str, Any] | None:
    """Try a waiting operation again, in a SAVEPOINT; its answer if this call settled it, else None."""
    attempt = db.session.begin_nested()
    # Claim it: a no-op UPDATE takes the row's write lock; a concurrent retry then finds it settled.
    table = SyncOperation.__table__
    claimed = db.session.execute(update(table).where(table.c.op_id == op_id, table.c.status == "waiting")
                                 .values(arrival=table.c.arrival).returning(table.c.op_id)).first()
    if claimed is None:
        attempt.rollback()
        return None
    row = db.session.execute(select(SyncOperation.__table__).where(SyncOperation.op_id == op_id)).one()
    user = db.session.get(User, row.user_id)
    ctx = Context(user=user, device_id=row.device_id, clock_offset=dt.timedelta(seconds=row.clock_offset_s),
                  blobs=blob_store())
    op = Op(op_id, row.kind, row.record_id, row.base_revision, row.device_time, row.payload)
    # Tried as it was sent: within the town its device's token is limited to, whoever's request retries it
    # (the same user from a browser session, another device completing a blob). Else an operation beyond
    # the token's town, kept waiting as for a record not there, was applied by the next push of a session.
    device = db.session.get(SyncDevice, row.device_id) if row.device_id else None
    stopped = device is not None and device.is_revoked and device.revoked_by_id != device.user_id
    if stopped or user is None or not user.is_enabled:
        # Its device revoked by someone else (an admin's, for a lost tablet) or its account disabled since it was
        # sent: it is never applied, by whoever's request would retry it, in the name of the account that sent it.
        # (A device its own user's new password revoked sent its work as that user: it waits as before.)
        answer = _settle(op_id, row.record_id, "rejected", {"reasons": {"device": (
            "The device that sent this was revoked, or its account disabled, before it could be applied.")}})
        attempt.commit()
        return answer
    try:
        with limited_to_token(device):
            status, result = _attempt_op(ctx, op)
    except IntegrityError:
        attempt.rollback()
        return None
    if status == "waiting" and _stored_result(row.record_id, status, result) == row.result:
        attempt.rollback()  # still waiting for the same thing
        return None
    answer = _settle(op_id, row.record_id, status, result)
    attempt.commit()
    return None if status == "waiting" else answer


def _retry_waiting(user_id: str | None = None, blob: str | None = None) -> int:
    """Retry waiting operations in the order they arrived, inside the open transaction; how many settled."""
    query = (select(SyncOperation.op_id, SyncOperation.result).where(SyncOperation.status == "waiting")
             .order_by(SyncOperation.arrival))
    if user_id is not None:
        query = query.where(SyncOperation.user_id == user_id)
    store, settled = blob_store(), 0
    for op_id, result in db.session.execute(query).all():
        waited = ((result or {}).get("waiting_for") or {}).get("blob")
        if blob is not None and waited != blob:
            continue
        if waited and not store.exists(waited):
            continue  # its blob has not come: trying again would change nothing
        settled += _retry_one(op_id) is not None
    return settled


def retry_waiting(user_id: str | None = None, blob: str | None = None) -> int:
    """Retry waiting operations (one user's, or those waiting for a blob) in one transaction."""
    begin_write()
    try:
        settled = _retry_waiting(user_id=user_id, blob=blob)
        db.session.commit()
    except BaseException:
        db.session.rollback()
        raise
    return settled


def stored_inspections(ops: list[Op], answers: list[dict[str, Any]]) -> list[str]:
    """The ids of the reports a push stored now (their weather is filled once the push is answered)."""
    return [op.record_id for op, answer in zip(ops, answers, strict=True)
            if op.kind == "inspection.submit" and answer["status"] == "applied"]


def fill_weather(app, inspection_ids: list[str]) -> None:
    """After a push was answered: the weather of the reports it brought, then a few older pending ones.

    Called once the answer has been sent, so a push never waits for the weather service. Each lookup
    is bounded by WEATHER_DEADLINE_S; at most `SYNC_BACKFILL_LIMIT` (3) older reports are tried, so the
    worker is soon free again. A report whose weather cannot be had now stays pending for the next try.
    """
    with app.app_context():
        try:
            for inspection_id in inspection_ids:
                inspection = db.session.get(Inspection, inspection_id)
                if inspection is not None and weather.needs_weather(inspection):
                    weather.fill_inspection_weather(inspection)
            limit = int(setting("SYNC_BACKFILL_LIMIT", BACKFILL_LIMIT))
            if limit > 0:
                weather.backfill_pending(limit=limit)
            db.session.commit()
        except Exception:  # the push is answered and kept; the weather stays pending for the next backfill
            db.session.rollback()
            app.logger.exception("filling the weather after a push failed")
        finally:
            db.session.remove()


# --- pull ----------------------------------------------------------------------------------------

def changes(user, cursor: int, limit: int) -> dict[str, Any]:
    """The audit entries after `cursor` on permits `user` may see, in commit order, one page.

    The cursor is `commit_seq`, given in commit order: an entry that becomes visible later always has a
    higher one than every entry visible now, so a cursor never passes over one still to come.

    Entries about someone else's draft report (or its findings, actions, photos ...) are left out: a
    draft is its author's alone. Once submitted, the submission's own entries bring its permit back,
    and a device then takes the permit's snapshot, which holds what the report made. So are the entries of a
    draft's part that is gone (a draft discarded, a finding taken off one: only a draft's parts are ever
    removed), to all but whoever made them: what was typed in it stays its author's.
    """
    visible = visible_permits(user).with_only_columns(Permit.id).scalar_subquery()
    hidden = hidden_draft_parts(user, shared=True)
    drafts = or_(*(and_(AuditEntry.entity == table, AuditEntry.entity_id.in_(ids)) for table, ids in hidden.items()))
    tables = db.Model.metadata.tables
    removed = or_(*(and_(AuditEntry.entity == table, ~select(tables[table].c.id)
                         .where(tables[table].c.id == AuditEntry.entity_id).exists()) for table in hidden))
    theirs = AuditEntry.actor_id == user.id if getattr(user, "is_authenticated", False) else False
    query = (select(AuditEntry).where(AuditEntry.commit_seq > cursor, AuditEntry.permit_id.in_(visible), ~drafts,
                                      or_(theirs, ~removed))
             .order_by(AuditEntry.commit_seq).limit(limit + 1))
    if not allowed(user, "inspection.notice.view"):  # a 24-hour notice is the inspectors' and the town's (§380-16 C(3))
        query = query.where(AuditEntry.entity != InspectionNotice.__tablename__)
    rows = list(db.session.scalars(query))
    page = rows[:limit]
    return {
        "changes": [{"seq": e.seq, "at": e.at.isoformat(), "action": e.action, "entity": e.entity,
                     "entity_id": e.entity_id, "permit_id": e.permit_id, "after": e.after} for e in page],
        "cursor": page[-1].commit_seq if page else cursor,
        "more": len(rows) > limit,
    }


def latest_seq() -> int:
    return db.session.scalar(select(func.max(AuditEntry.commit_seq))) or 0


def snapshot(permit: Permit, user) -> dict[str, Any]:
    """What a device of `user` needs to inspect `permit` offline, with the cursor to pull changes from.

    Nothing of someone else's draft report: its findings, their actions and punch-list items stay out.
    """
    cursor = latest_seq()
    profile = profile_of(permit)
    inspections = select(Inspection).where(Inspection.permit_id == permit.id, Inspection.status == "submitted")
    last = db.session.scalar(inspections.order_by(Inspection.performed_at.desc()).limit(1))
    findings = list(db.session.scalars(select(Finding).where(Finding.permit_id == permit.id,
                                                             Finding.status == "open", shown(user, Finding))))
    actions = db.session.scalars(select(CorrectiveAction).where(CorrectiveAction.permit_id == permit.id,
                                                                CorrectiveAction.status != "verified",
                                                                shown(user, CorrectiveAction)))
    punch = db.session.scalars(select(PunchListItem).where(PunchListItem.permit_id == permit.id,
                                                           PunchListItem.resolved_at.is_(None),
                                                           shown(user, PunchListItem)))
    people = {a.user for a in permit.assignments} | ({permit.owner} if permit.owner else set())
    return {
        "cursor": cursor,
        "jurisdiction": audit.snapshot(permit.jurisdiction),
        "permit": audit.snapshot(permit),
        "people": [person(u) for u in sorted(people, key=lambda u: u.id)],
        "assignments": [audit.snapshot(a) for a in permit.assignments],
        "areas": [audit.snapshot(a) for a in permit.areas],
        "area_events": [audit.snapshot(e) for a in permit.areas for e in a.events],
        "structures": [audit.snapshot(s) for s in permit.structures],
        "findings": [audit.snapshot(f) for f in findings],
        "corrective_actions": [audit.snapshot(a) for a in actions],
        "punch_list": [audit.snapshot(p) for p in punch],
        "last_inspection": audit.snapshot(last) if last else None,
        "last_inspection_answers": [audit.snapshot(a) for a in last.answers] if last else [],
        "checklists": [t.model_dump(mode="json") for t in profile.inspection_types],
        "profile": {"key": profile.key, "town": profile.town, "authority_title": profile.authority_title,
                    "stabilization_days": profile.stabilization.days,
                    "advance_notice_hours": profile.advance_notice.hours},
    }


def person(user: User) -> dict[str, Any]:
    """The facts about a person a report prints; never a password hash."""
    return {"id": user.id, "email": user.email, "name": user.name, "role": user.role,
            "pe_number": user.pe_number, "certification": user.certification,
            "title": user.title, "organization": user.organization}


# --- blobs ---------------------------------------------------------------------------------------

# Who uploads: the people who add photos, sign certifications or submit completion documents.
UPLOAD_ACTIONS = ("photo.add", "completion.submit", "om.certify")
BLOB_QUOTA_BYTES = 5 * 1024**3


def may_upload(user) -> bool:
    role_types = UPLOAD_TYPES.get(getattr(user, "role", None))
    return bool(role_types) and any(allowed(user, action) for action in UPLOAD_ACTIONS)


def check_quota(user, sha: str, adding: int) -> None:
    """UploadRefused (413) if this upload would take the user past `SYNC_BLOB_QUOTA_BYTES`: their completed
    uploads, their other unfinished ones (`BlobUpload`: each counts the bytes it holds), and this one."""
    quota = int(setting("SYNC_BLOB_QUOTA_BYTES", BLOB_QUOTA_BYTES))
    used = db.session.scalar(select(func.coalesce(func.sum(Blob.size), 0))
                             .where(Blob.uploaded_by_id == user.id)) or 0
    unfinished = db.session.scalar(select(func.coalesce(func.sum(BlobUpload.received), 0)).where(
        BlobUpload.user_id == user.id, BlobUpload.sha256 != sha)) or 0
    if used + unfinished + blob_store().received(sha) + adding > quota:
        raise UploadRefused(413, f"Your uploads would pass your quota of {quota // 1024**2} MiB (unfinished ones "
                                 "count too: complete them, or they are removed a day after their last chunk); "
                                 "ask an admin to raise it.")


def note_upload(user, sha: str, received: int) -> None:
    """What `user`'s unfinished upload of `sha` holds now (after a chunk), for their quota."""
    values = {"received": received, "updated_at": utcnow()}
    updated = db.session.execute(update(BlobUpload).where(BlobUpload.sha256 == sha, BlobUpload.user_id == user.id)
                                 .values(**values)).rowcount
    if not updated:
        try:  # a second chunk of the same upload at the same moment may have made the row first
            with db.session.begin_nested():
                db.session.add(BlobUpload(sha256=sha, user_id=user.id, **values))
        except IntegrityError:
            db.session.execute(update(BlobUpload).where(BlobUpload.sha256 == sha, BlobUpload.user_id == user.id)
                               .values(**values))
    db.session.commit()


def complete_blob(user, sha: str, declared_type: str) -> int:
    """Verify an upload (its hash, then its type) and record its Blob row; retries the operations that
    waited for it. Bytes of a type not allowed are removed again, like bytes with the wrong hash."""
    store = blob_store()
    try:
        store.complete(sha)  # HashMismatch discards the bytes
    finally:  # done, or discarded: no longer anyone's unfinished upload
        db.session.execute(delete(BlobUpload).where(BlobUpload.sha256 == sha))
        db.session.commit()
    if db.session.get(Blob, sha) is None:
        try:
            content_type = upload_type(user, sha, declared_type)
        except UploadRefused:
            store.remove(sha)
            raise
        # completed twice at once: one row is enough
        files.record_blob(sha, store.size(sha), content_type, uploaded_by_id=getattr(user, "id", None))
        db.session.commit()
    return retry_waiting(blob=sha)


# --- conflicts -----------------------------------------------------------------------------------

def resolve_conflict(actor, conflict: SyncConflict, record) -> SyncConflict:
    """Record that a person reconciled the two versions; a flag goes when no conflict stays open."""
    before = audit.snapshot(conflict)
    if conflict.resolved_at is None:
        conflict.resolved_at = utcnow()
        conflict.resolved_by_id = actor.id
        audit.record(actor, "sync.conflict_resolve", conflict, before, permit_id=conflict.permit_id)
    db.session.flush()
    still_open = db.session.scalar(select(func.count(SyncConflict.id)).where(
        SyncConflict.entity_id == record.id, SyncConflict.resolved_at.is_(None)))
    if not still_open and getattr(record, "has_conflict", False):
        record_before = audit.snapshot(record)
        record.has_conflict = False
        audit.record(actor, "area.conflict_resolved", record, record_before)
    return conflict


def conflict_record(conflict: SyncConflict) -> tuple[Any, str] | None:
    """The record a conflict is about and the policy action needed to reconcile it, if it still exists."""
    model, action = CONFLICT_ENTITIES[conflict.entity]
    record = db.session.get(model, conflict.entity_id)
    return (record, action) if record is not None else None


# --- devices -------------------------------------------------------------------------------------

def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_device(actor, user: User, name: str) -> tuple[SyncDevice, str]:
    """A device token for `user`; the token itself is shown once and only its hash is kept."""
    token = secrets.token_urlsafe(32)
    device = SyncDevice(user_id=user.id, name=name.strip()[:120] or "device", token_sha256=token_hash(token),
                        created_by_id=getattr(actor, "id", None), jurisdiction_id=token_town(actor))
    db.session.add(device)
    audit.record(actor, "sync.device_create", device)
    return device, token


def revoke_device(actor, device: SyncDevice) -> SyncDevice:
    """Stop a device token from working, from its next request on."""
    before = audit.snapshot(device)
    if device.revoked_at is None:
        device.revoked_at = utcnow()
        device.revoked_by_id = getattr(actor, "id", None)
    audit.record(actor, "sync.device_revoke", device, before)
    return device


@password_changed.connect
@account_disabled.connect
def revoke_devices_of(user: User, actor=None, **_) -> None:
    """A new password (accounts.services.change_password) ends every device token of the account: a token
    taken along with the old password stops working too. So does disabling the account (`set_enabled`), for good:
    a lost tablet, the reason to disable it, does not come back when the account is enabled again. Operations its device already sent are kept; one still
    waiting is applied when what it waits for comes (a device revoked by someone else's act is not: `_retry_one`)."""
    for device in db.session.scalars(select(SyncDevice).where(SyncDevice.user_id == user.id,
                                                              SyncDevice.revoked_at.is_(None))):
        revoke_device(actor, device)


def device_for_token(token: str) -> tuple[SyncDevice, User] | None:
    """The unrevoked device that holds `token` and its user, if enabled; else None. The user is returned
    with it: the session keeps a row only while something holds it, so asking for it again would read it
    again."""
    device = db.session.scalar(select(SyncDevice).where(SyncDevice.token_sha256 == token_hash(token)))
    if device is None or device.is_revoked:
        return None
    user = user_by_id(device.user_id)
    return (device, user) if user is not None and user.is_enabled else None


def _aware_time(value: Any) -> dt.datetime | None:
    """An ISO 8601 time with its UTC offset, within the years the app takes (in_calendar); else None."""
    if not isinstance(value, str):
        return None
    try:
        parsed = in_calendar(dt.datetime.fromisoformat(value))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None
