"""The one place that decides who may see or change what (SPEC *Who uses it*).

- A permittee sees only the permits they own.
- An inspector sees the permits they are assigned to.
- An agent sees everything in their jurisdiction.
- An admin configures everything in their jurisdiction, or in every town when they have none. A town's
  admin manages the accounts, device tokens and mail of that town only (`managed_users`, `visible_mail`):
  its agents and admins, and the inspectors and permittees whose every permit is in it.
- A device token is limited to the town of the admin who minted it (`token_town`): through it, its user
  sees only their permits of that town, even if they are later assigned to another town's permit. A
  token minted by the admin of all towns (or at the server's prompt) is limited to nothing beyond what
  its user sees. A request signed in by a token carries that limit (`limit_to_token`), and `sees` and
  `visible_permits` apply it, so every path of the sync API does.
- A draft report, and everything of it (answers, findings, their corrective actions, punch-list items,
  photos), is its author's alone until it is submitted (`hidden_draft_parts`; `inspections.queries.sees_report`
  for one report): not the permittee's, not the town's agents', not another inspector's on the same permit.
  §380-16 C(4)(f)[1]: "written reports shall be submitted to the applicant and the DPW Director after each inspection";
  what they receive is the submitted report, not the engineer's work in progress.
- A stored file (blob) is its uploader's, and theirs who see a record that names it (`sees_blob`); to
  anyone else the upload routes answer as for no file at all. A form or a sync operation that names a stored
  file by its SHA-256 (a photo a device uploaded first, a drawn signature, a pipe-run video) asks
  `usable_blob`: one rule for every such field.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from flask import abort, g, has_app_context
from flask_login import current_user
from sqlalchemy import (ColumnElement, CompoundSelect, Select, Text, and_, bindparam, cast, exists, false, func, literal,
                        or_, select)
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import aliased, joinedload

from inspect_app.accounts import records
from inspect_app.accounts.models import User
from inspect_app.audit.models import AuditEntry
from inspect_app.blobs import files
from inspect_app.blobs.models import Blob
from inspect_app.blobs.store import BlobStore
from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail
from inspect_app.permits.models import Permit, PermitAssignment

# action → roles that may do it, before the per-permit check below.
ACTIONS: dict[str, frozenset[str]] = {
    "permit.view": frozenset({"inspector", "agent", "permittee", "admin"}),
    # A permittee's home page: their permits, reports, orders and deadlines on one page.
    "permit.list_mine": frozenset({"permittee"}),
    # The permit list's filter by assigned inspector: for those who assign them.
    "permit.filter_by_inspector": frozenset({"agent", "admin"}),
    "permit.create": frozenset({"agent", "admin"}),
    "permit.edit": frozenset({"agent", "admin"}),
    "permit.assign": frozenset({"agent", "admin"}),
    "area.edit": frozenset({"inspector", "agent", "admin"}),
    "structure.edit": frozenset({"agent", "admin"}),
    # §380-16 C(4)(c): the engineer on site (or the town's agent) records when a structure was backfilled.
    "structure.backfill": frozenset({"inspector", "agent"}),
    # CGP 2022 Part 4.4: the site documents frozen conditions; Parts 4.2-4.3: a snowmelt discharge seen on site.
    "conditions.record": frozenset({"inspector", "agent"}),
    # Longmeadow §380-8, Southborough §6.2: the town's authority waives a requirement.
    "waiver.grant": frozenset({"agent"}),
    "inspection.perform": frozenset({"inspector", "agent"}),
    # §380-16 C(2)-(3): the five scheduled inspections are the engineer's; agents do periodic/random ones.
    "inspection.regulatory": frozenset({"inspector"}),
    "inspection.notice": frozenset({"inspector"}),
    # §380-16 C(3): the 24-hour notices are given by the engineer and read by the town's agents.
    "inspection.notice.view": frozenset({"inspector", "agent"}),
    "finding.review": frozenset({"agent"}),
    "action.close": frozenset({"inspector", "agent", "permittee"}),
    "photo.add": frozenset({"inspector", "agent", "permittee"}),
    # Drawing on a photo: beside this, whoever may edit what it belongs to (a draft report: its author).
    "photo.markup": frozenset({"inspector", "agent", "permittee"}),
    "stop_work.issue": frozenset({"agent"}),
    "stop_work.lift": frozenset({"agent"}),
    "stop_work.acknowledge": frozenset({"permittee"}),
    "completion.submit": frozenset({"inspector", "permittee"}),
    "completion.review": frozenset({"agent"}),
    "certificate.issue": frozenset({"agent"}),
    "surety.release": frozenset({"agent"}),
    "om.log": frozenset({"permittee", "inspector"}),
    "om.certify": frozenset({"permittee"}),
    "om.review": frozenset({"agent"}),
    "om.plan.edit": frozenset({"agent", "admin"}),
    "dashboard.view": frozenset({"agent", "admin"}),
    "dashboard.my_day": frozenset({"inspector"}),
    "dashboard.calendar": frozenset({"inspector", "agent", "admin"}),
    # Another inspector's calendar: the town's, not a fellow inspector's (an inspector reads their own).
    "dashboard.calendar.others": frozenset({"agent", "admin"}),
    "users.manage": frozenset({"admin"}),
    "mail.view": frozenset({"admin"}),
    # Importing permits and people from spreadsheets, and exporting the whole record (a town's admin: their town).
    "transfer.import": frozenset({"admin"}),
    "transfer.export": frozenset({"admin"}),
}


def acts_for_all_towns(user) -> bool:
    """An admin with no town of their own: the one role that acts in every town."""
    return getattr(user, "is_authenticated", False) and user.role == "admin" and user.jurisdiction_id is None


def token_town(admin) -> str | None:
    """The town a device token minted by `admin` is limited to: a town admin's own; None (no town limit)
    for the admin of all towns or the server's prompt (no admin)."""
    if admin is None or acts_for_all_towns(admin):
        return None
    return admin.jurisdiction_id


def limit_to_token(device) -> None:
    """This request is signed in by `device`'s token (None: by a session): limit what it sees to its town."""
    g.token_town = getattr(device, "jurisdiction_id", None)


@contextmanager
def limited_to_token(device) -> Iterator[None]:
    """`limit_to_token(device)` for the block only; then the request's own limit again."""
    before = g.get("token_town")
    limit_to_token(device)
    try:
        yield
    finally:
        g.token_town = before


def _token_town() -> str | None:
    return g.get("token_town") if has_app_context() else None


def _unwrapped(user):
    """The user itself when given Flask-Login's `current_user`, through which every attribute read looks the
    user up again: a permit page asks the policy a hundred times, each reading several."""
    current = getattr(user, "_get_current_object", None)
    return current() if current is not None else user


def _in_jurisdiction(user, permit: Permit) -> bool:
    if acts_for_all_towns(user):
        return True
    return user.jurisdiction_id == permit.jurisdiction_id


def is_assigned(user, permit: Permit) -> bool:
    return any(a.user_id == user.id for a in permit.assignments)


def sees(user, permit: Permit) -> bool:
    """Whether `user` may see `permit` at all."""
    user = _unwrapped(user)
    if not getattr(user, "is_authenticated", False):
        return False
    town = _token_town()
    if town is not None and permit.jurisdiction_id != town:
        return False
    if user.role in ("agent", "admin"):
        return _in_jurisdiction(user, permit)
    if user.role == "inspector":
        return is_assigned(user, permit)
    return user.role == "permittee" and permit.owner_id == user.id


def allowed(user, action: str, permit: Permit | None = None) -> bool:
    """Whether `user` may do `action`, on `permit` when the action concerns one."""
    user = _unwrapped(user)
    if not getattr(user, "is_authenticated", False):
        return False
    if user.role not in ACTIONS[action]:
        return False
    if permit is None:
        return True
    return sees(user, permit)


def require(action: str, permit: Permit | None = None) -> None:
    """Refuse the request with 403 unless the current user may do `action`."""
    if not allowed(current_user, action, permit):
        abort(403)


def permit_or_404(permit_id: str, action: str = "permit.view") -> Permit:
    """The permit, if the current user may see it and do `action` on it.

    A permit you may not see does not exist for you (404); one you see but may not act on is 403.
    """
    # Taken from the session if it holds it loaded, as `Session.get` does; else read with its inspectors in the same
    # statement (`sees` and nearly every page read them), built once: `Session.get` with that option built its
    # statement again at each call, a quarter of its cost, on most requests.
    permit = db.session.identity_map.get(db.session.identity_key(Permit, permit_id))
    if permit is None or sa_inspect(permit).expired:
        permit = db.session.execute(_permit_with_inspectors(), {"permit_id": permit_id}).unique().scalar_one_or_none()
    if permit is None or not sees(current_user, permit):
        abort(404)
    require(action, permit)
    return permit


@cache
def _permit_with_inspectors() -> Select[tuple[Permit]]:
    """`permit_or_404`'s statement: a permit by the parameter `permit_id`, with its assignments."""
    return select(Permit).where(Permit.id == bindparam("permit_id")).options(joinedload(Permit.assignments))


def visible_permits(user) -> Select[tuple[Permit]]:
    """A query of the permits `user` may see; the same rule as `sees`, in SQL."""
    query = select(Permit)
    if not getattr(user, "is_authenticated", False):
        return query.where(false())
    town = _token_town()
    if town is not None:
        query = query.where(Permit.jurisdiction_id == town)
    if user.role in ("agent", "admin"):
        if acts_for_all_towns(user):
            return query  # no condition at all, which the dashboard tells from a list of every permit
        return query.where(Permit.jurisdiction_id == user.jurisdiction_id)
    if user.role == "inspector":
        assigned = select(PermitAssignment.permit_id).where(PermitAssignment.user_id == user.id)
        return query.where(Permit.id.in_(assigned))
    return query.where(Permit.owner_id == user.id)


def _works_on_a_permit(*conditions):
    """SQL: the user of the enclosing query owns, or is assigned to, a permit meeting `conditions` (any permit
    without).

    With conditions (a town's permits), the people who work on those permits are found once, from the
    permits: asked person by person, each inspector's every assignment was read, in every town of the
    state, for each list of people a permit page offers. Without, the first permit found per person answers.
    """
    if not conditions:
        owns = select(Permit.id).where(Permit.owner_id == User.id)
        assigned = select(PermitAssignment.permit_id).where(PermitAssignment.user_id == User.id)
        return or_(exists(owns), exists(assigned))
    owners = select(Permit.owner_id).where(Permit.owner_id.is_not(None), *conditions)
    assigned = (select(PermitAssignment.user_id).join(Permit, Permit.id == PermitAssignment.permit_id)
                .where(*conditions))
    return or_(User.id.in_(owners), User.id.in_(assigned))


def managed_users(admin) -> Select[tuple[User]]:
    """A query of the accounts `admin` manages (their device tokens too); the one rule, in SQL.

    The admin of all towns manages everyone. A town's admin manages its own agents and admins, and the
    inspectors and permittees who work in that town alone: at least one permit there and none elsewhere
    (they belong to no town, so their permits say whose they are). Never the admin of all towns. One who works
    on no permit yet is the town's whose staff invited them (a town's import of its people, `user.invite`),
    so its admin can send them a new link to set their password.
    """
    query = select(User)
    if not allowed(admin, "users.manage"):
        return query.where(false())
    if acts_for_all_towns(admin):
        return query
    town = admin.jurisdiction_id
    staff = and_(User.role.in_(("agent", "admin")), User.jurisdiction_id == town)
    works_here = and_(User.role.in_(("inspector", "permittee")),
                      _works_on_a_permit(Permit.jurisdiction_id == town),
                      ~_works_on_a_permit(Permit.jurisdiction_id != town))
    inviter = aliased(User)
    invited_here = (select(AuditEntry.entity_id).join(inviter, inviter.id == AuditEntry.actor_id)
                    .where(AuditEntry.entity == "users", AuditEntry.action == "user.invite",
                           inviter.jurisdiction_id == town))
    new_here = and_(User.role.in_(("inspector", "permittee")), ~_works_on_a_permit(),
                    User.id.in_(invited_here))
    return query.where(or_(staff, works_here, new_here))


def people_to_choose(user, role: str) -> Select[tuple[User]]:
    """The inspectors or permittees (`role`) offered to `user` in a list to choose from (a permit's owner,
    its inspectors, an O&M party, the permit list's filter), by name.

    Inspectors and permittees belong to no town: their permits say where they work. A town's agent or admin
    is offered those who work in that town, and those who work nowhere yet (a new account, to give its first
    permit); never those who work only in other towns. The admin of all towns is offered everyone.
    """
    query = select(User).where(User.role == role).order_by(User.name)
    if not getattr(user, "is_authenticated", False) or user.role not in ("agent", "admin"):
        return query.where(false())
    if acts_for_all_towns(user):
        return query
    town = user.jurisdiction_id
    return query.where(or_(_works_on_a_permit(Permit.jurisdiction_id == town), ~_works_on_a_permit()))


def manages(admin, user) -> bool:
    """Whether `admin` may manage `user`'s account and device tokens (see `managed_users`)."""
    return user is not None and db.session.scalar(
        managed_users(admin).with_only_columns(User.id).where(User.id == user.id)) is not None


def visible_mail(user) -> Select[tuple[OutboundEmail]]:
    """The stored mail `user` may read: every message for the admin of all towns, else their town's."""
    query = select(OutboundEmail)
    if not allowed(user, "mail.view"):
        return query.where(false())
    if acts_for_all_towns(user):
        return query
    visible = visible_permits(user).with_only_columns(Permit.id)
    # And the mail of no permit sent to the people they manage (a set-password link: with no mail server, this
    # page is how it reaches its person). `to` is a JSON list of addresses, each written in quotes.
    managed = managed_users(user).with_only_columns(User.email).subquery()
    # The address matched as itself: "%" and "_" may be in an address, and are a LIKE pattern's wildcards
    # ("%@example.org", an account a town's admin may make, matched every address of the domain).
    address = managed.c.email
    for wildcard in ("\\", "%", "_"):
        address = func.replace(address, wildcard, "\\" + wildcard)
    to_managed = exists().where(cast(OutboundEmail.to, Text).contains(literal('"') + address + literal('"'),
                                                                      escape="\\"))
    return query.where(or_(OutboundEmail.permit_id.in_(visible),
                           and_(OutboundEmail.permit_id.is_(None), to_managed)))


def hidden_draft_parts(user=None, *, shared: bool = False) -> dict[str, Select | CompoundSelect]:
    """By table, queries of the ids of draft records `user` may not see (with no user: every draft's).

    The same rule as `sees_report`, in SQL, for lists and feeds: the drafts of others, with their
    checklist answers, findings, the corrective actions opened on them, punch-list items and photos. Each domain
    declares its parts beside its models (`accounts/records.py`). `shared`: for a statement that leaves them
    out (NOT IN), the parts read by other parts as common table expressions (`records.hidden_parts`).
    """
    return records.hidden_parts(user, shared=shared)


def shown(user, model) -> ColumnElement[bool]:
    """SQL: the rows of `model` (a report or a part of one) that are not someone else's draft."""
    return model.id.not_in(hidden_draft_parts(user, shared=True)[model.__tablename__])


def visible(user, model) -> ColumnElement[bool]:
    """SQL: the rows of `model` (a record of a permit) that `user` may see: of a permit they see, and not
    part of someone else's draft report. The rule of `sees` and `sees_part`, in SQL, so a query can
    leave out (and never lock) what is not theirs."""
    condition = model.permit_id.in_(visible_permits(user).with_only_columns(Permit.id))
    hidden = hidden_draft_parts(user, shared=True).get(model.__tablename__)
    return condition if hidden is None else and_(condition, model.id.not_in(hidden))


def sees_part(user, record) -> bool:
    """Whether `user` may see a record that may be part of a report (report, finding, action, photo ...).

    Records of other kinds (a structure, a log entry) are never part of a draft: True.
    """
    if record is None:
        return False
    hidden = hidden_draft_parts(user).get(record.__tablename__)
    if hidden is None:
        return True
    model = type(record)
    return db.session.scalar(select(model.id).where(model.id == record.id, model.id.in_(hidden))) is None


def sees_blob(user, sha: str) -> bool:
    """Whether `user` may ask about, add to or complete the upload of blob `sha` (/sync/blobs).

    A file not stored yet is anyone's to upload. A stored one is its uploader's, and theirs who see a
    record that names it: a photo or one of its renditions, a final submission, a frozen document, a
    signature, a pipe-run video (not of someone else's draft). Anyone else learns nothing of it, not even
    that it is stored.
    """
    blob = db.session.get(Blob, sha)
    if blob is None or blob.uploaded_by_id == user.id:
        return True
    permits = visible_permits(user).with_only_columns(Permit.id)
    naming = records.naming(sha, permits, hidden_draft_parts(user, shared=True))
    return bool(db.session.scalar(select(or_(*(exists(query) for query in naming)))))


def usable_blob(user, sha: str | None, store: BlobStore | None = None) -> bool:
    """Whether `user` may name the stored file `sha` in a form or a sync operation: it is stored whole, and it
    is theirs (`sees_blob`: they uploaded it, or they see a record that names it).

    A file not stored and a file stored but not theirs (another user's draft photo, another town's) give the
    same False, so a caller answers both alike: naming a hash tells nobody whether someone else's file is
    stored, and never makes it theirs.
    """
    if not sha or not files.SHA256.fullmatch(sha) or db.session.get(Blob, sha) is None:
        return False
    return (store or files.blob_store()).exists(sha) and sees_blob(user, sha)
