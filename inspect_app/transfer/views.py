"""The admin's import and export page: upload a spreadsheet, see the dry run, apply it; download the record.

An uploaded file is kept in the blob store under its SHA-256, as its uploader's (a `blobs` row naming them), until
it is applied; nothing else names it, so `flask blobs gc` removes it after a day. The dry run and the apply are
streamed pages (the forms leading to them are not boosted, so the browser shows the page as it comes): the
progress lines appear while the file is read, then the table. An applied import is committed at the end of its
page, all or nothing.
"""
from __future__ import annotations

import io
import logging
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field

from flask import (Blueprint, Response, abort, current_app, flash, redirect, render_template, request, send_file,
                   stream_template, stream_with_context, url_for)
from flask_login import current_user, login_required

from inspect_app.blobs import files
from inspect_app.accounts import invitations
from inspect_app.accounts.models import User
from inspect_app.accounts.policy import acts_for_all_towns, manages, require
from inspect_app.accounts.services import AccountError
from inspect_app.extensions import db
from inspect_app.blobs.models import Blob
from inspect_app.transfer.cli import archive_name
from inspect_app.transfer.columns import PERMIT_COLUMNS, STRUCTURE_COLUMNS, USER_COLUMNS
from inspect_app.transfer.export import Scope, write_archive
from inspect_app.transfer.forms import UploadForm
from inspect_app.transfer.rows import Problem, Progress, Tally
from inspect_app.transfer.services import KINDS, conclude, invite, run_import
from inspect_app.transfer.sheets import STRUCTURES_SHEET, FileProblem, kind_of, template_csv

bp = Blueprint("transfer", __name__, url_prefix="/transfer")
log = logging.getLogger(__name__)
TEMPLATES = {"permits": PERMIT_COLUMNS, "structures": STRUCTURE_COLUMNS, "users": USER_COLUMNS}
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@bp.get("/")
@login_required
def index():
    """Import permits or people from a spreadsheet; download the templates and the whole record."""
    require("transfer.import")
    return _index({kind: UploadForm(prefix=kind) for kind in KINDS})


def _index(forms: dict, status: int = 200, refused: str | None = None):
    return render_template("transfer/index.html", forms=forms, waiting=invitations.awaiting_password(current_user),
                           refused=refused, link_days=invitations.LINK_DAYS,
                           mail_server=bool(current_app.config.get("SMTP_HOST"))), status


@bp.post("/people/<user_id>/link")
@login_required
def send_link(user_id: str):
    """Mail a person who has not set their password a new link to set it; the one before stops working."""
    require("users.manage")
    user = db.session.get(User, user_id)
    if user is None or not manages(current_user, user):
        abort(404)
    try:
        message = invitations.send_new_link(current_user, user)
    except AccountError as error:
        return _index({kind: UploadForm(prefix=kind) for kind in KINDS}, 409, str(error))
    db.session.commit()
    flash(f"A new link to set a password for {user.email}: {invitations.mailed_words([message])}. The link before "
          "it no longer works.", "success" if message.sent_at or not current_app.config.get("SMTP_HOST") else "error")
    return redirect(url_for("transfer.index", _anchor="waiting"), code=303)


@bp.post("/import/<kind>")
@login_required
def upload(kind: str):
    """Keep the uploaded file (and a structures file) and show its dry run."""
    require("transfer.import")
    if kind not in KINDS:
        abort(404)
    form = UploadForm(prefix=kind)
    if form.validate_on_submit():
        try:
            kind_of(form.file.data.filename)
            if form.structures.data:
                kind_of(form.structures.data.filename)
        except FileProblem as error:
            form.file.errors.append(str(error))
        else:
            names = {"upload": _keep(form.file.data), "file": form.file.data.filename}
            if kind == "permits" and form.structures.data:
                names.update(structures=_keep(form.structures.data), structures_file=form.structures.data.filename)
            return redirect(url_for("transfer.check", kind=kind, **names), code=303)
    return _index({name: UploadForm(prefix=name) for name in KINDS} | {kind: form}, 422)


def _keep(upload) -> str:
    store = files.blob_store()
    sha = store.put_file(upload.stream)
    files.record_blob(sha, store.size(sha), upload.mimetype or "application/octet-stream",
                      uploaded_by_id=current_user.id)
    db.session.commit()
    return sha


def _uploaded(sha: str | None) -> str:
    """The SHA-256 of a file the current user uploaded and the store still keeps (404 for any other)."""
    blob = db.session.get(Blob, sha) if sha and len(sha) == 64 else None
    if blob is None or blob.uploaded_by_id != current_user.id or not files.blob_store().exists(sha):
        abort(404)
    return sha


@bp.get("/import/<kind>/<upload>")
@login_required
def check(kind: str, upload: str):
    """The dry run of an uploaded file: what is wrong, and what applying it would do. Changes nothing."""
    return _stream(kind, upload, apply=False)


@bp.post("/import/<kind>/<upload>/apply")
@login_required
def apply(kind: str, upload: str):
    """Apply an uploaded file: everything in one transaction if no row has a problem, else nothing."""
    return _stream(kind, upload, apply=True)


@dataclass
class _Run:
    """What the streamed page shows once the events are read."""

    tally: Tally = field(default_factory=Tally)
    committed: bool = False
    failed: str | None = None
    mailed: str = ""  # what became of the set-password links (invitations.mailed_words)


def _stream(kind: str, upload: str, *, apply: bool) -> Response:
    require("transfer.import")
    if kind not in KINDS:
        abort(404)
    main = _uploaded(upload)
    filename = request.args.get("file", "")
    extra = None
    if kind == "permits" and request.args.get("structures"):
        extra = (_uploaded(request.args["structures"]), request.args.get("structures_file", ""))
    app, args = current_app._get_current_object(), request.args.to_dict()

    def page() -> Iterator[str]:
        # The page is sent after the view has returned and its app context (with its database session) has
        # ended: it runs in an app context of its own, for the length of the import. The spreadsheet readers
        # want files: the store's own on disk, a copy of this request's from a bucket.
        with app.app_context(), ExitStack() as copies:
            store = files.blob_store()
            path = copies.enter_context(store.local_copy(main))
            structures = (copies.enter_context(store.local_copy(extra[0])), extra[1]) if extra else None
            run = _Run()
            actor = current_user._get_current_object()
            events = run_import(kind, path, filename, actor, apply=apply, structures=structures)
            yield from stream_template("transfer/check.html", kind=kind, apply=apply, run=run, args=args,
                                       upload=upload, progress=_progress(events, run, apply, actor))

    response = Response(stream_with_context(page()))
    response.headers["X-Accel-Buffering"] = "no"  # a proxy passes each part on as it comes
    return response


def _progress(events: Iterator, run: _Run, apply: bool, actor) -> Iterator[int]:
    """The rows read so far, as the events come; the run's tally (and commit) once they are all read."""
    try:
        for event in events:
            run.tally.add(event)
            if isinstance(event, Progress):
                yield event.rows
        run.committed = conclude(run.tally, apply)
        if run.committed:
            run.mailed = invite(run.tally, actor)
    except Exception:  # noqa: BLE001  (a streamed page cannot become a 500 page: say what happened)
        db.session.rollback()
        log.exception("import failed")
        run.failed = ("The import was applied, but mailing the links to set a password stopped on an error of the "
                      "app; the sent mail page shows what was sent." if run.committed else
                      "The import stopped on an error of the app. Nothing was changed.")
        run.tally.add(Problem(None, "", run.failed))


@bp.get("/template/<name>")
@login_required
def template(name: str):
    """A template to fill in: permits.csv, structures.csv, users.csv, or permits.xlsx (with its structures
    sheet) and users.xlsx."""
    require("transfer.import")
    kind, _, suffix = name.partition(".")
    if kind not in TEMPLATES or suffix not in ("csv", "xlsx") or (kind == "structures" and suffix == "xlsx"):
        abort(404)
    if suffix == "csv":
        return Response(template_csv(TEMPLATES[kind].values()), mimetype="text/csv",
                        headers={"Content-Disposition": f"attachment; filename={name}"})
    # openpyxl, and the numpy it imports, only where a spreadsheet is read or made: never in a worker at start
    from openpyxl import Workbook
    workbook = Workbook(write_only=True)
    sheets = [(kind, TEMPLATES[kind])] + ([(STRUCTURES_SHEET, STRUCTURE_COLUMNS)] if kind == "permits" else [])
    for title, columns in sheets:
        sheet = workbook.create_sheet(title)
        sheet.append([column.name for column in columns.values()])
        # The workbook's structures are on their own sheet: its list column is left empty (not given twice).
        sheet.append(["" if column.name == "structures" else column.example for column in columns.values()])
    out = io.BytesIO()
    workbook.save(out)
    return Response(out.getvalue(), mimetype=XLSX, headers={"Content-Disposition": f"attachment; filename={name}"})


@bp.get("/export")
@login_required
def export():
    """The whole record (a town's admin: their town's) as one zip archive."""
    require("transfer.export")
    out = tempfile.TemporaryFile()
    write_archive(out, Scope.of(current_user))
    out.seek(0)
    town = None if acts_for_all_towns(current_user) else current_user.jurisdiction
    return send_file(out, mimetype="application/zip", as_attachment=True, download_name=archive_name(town))
