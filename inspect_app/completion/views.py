"""Completion pages: final submissions and their review, the certificate of completion, surety releases."""
from __future__ import annotations

from flask import Blueprint, abort, redirect, render_template, request, url_for
from flask_login import current_user, login_required
from wtforms import SelectChoice

from inspect_app.accounts.policy import permit_or_404
from inspect_app.blobs import files
from inspect_app.completion import services
from inspect_app.completion.forms import (
    PE_STAMP, AsBuiltForm, CertificateForm, FinalReportForm, OMPlanForm, ReviewForm, SuretyReleaseForm,
)
from inspect_app.completion.models import SUBMISSION_KINDS, FinalSubmission
from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.labels import SUBMISSION_KIND_LABELS
from inspect_app.permits.models import Permit
from inspect_app.permits.services import profile_of
from inspect_app.templating import local_time

bp = Blueprint("completion", __name__, url_prefix="/permits/<permit_id>/completion")

SUBMIT_FORMS = {"om_plan": OMPlanForm, "as_built": AsBuiltForm, "final_report": FinalReportForm}
# Where each open gate of the certificate (services.gates_open) is closed: a page of the permit and its part.
GATE_PLACES = {
    "findings": ("permits.detail", "open-actions"), "corrective_actions": ("permits.detail", "open-actions"),
    "notices_to_correct": ("certifications.plan", "notices"), "stop_work": ("permits.detail", "enforcement"),
    "stabilization": ("permits.detail", "areas"), "easements_recorded": ("certifications.plan", "easements"),
    "npdes_notice_of_termination": ("permits.detail", "inspections"), "punch_list": ("permits.detail", "inspections"),
}


def section(permit: Permit) -> dict:
    """What the permit page shows of completion: submissions, certificate and surety (_section.html)."""
    record = services.completion_record(permit)
    return {"record": record, "submission_names": {k: SUBMISSION_KIND_LABELS[k] for k in _shown(record)}}


def _shown(record: services.CompletionRecord) -> list[str]:
    """The kinds of final submission the town asks for, and any other of which one was filed (before the town's
    profile asked for its own): in the one order of the kinds."""
    return [k for k in SUBMISSION_KINDS if k in record.kinds or record.submissions[k]]


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every completion page needs a signed-in user."""



def _submission(permit: Permit, submission_id: str) -> FinalSubmission:
    submission = db.get_or_404(FinalSubmission, submission_id)
    if submission.permit_id != permit.id:
        abort(404)
    return submission


def _submit_form(permit: Permit, kind: str):
    form = SUBMIT_FORMS[kind](prefix=kind)
    if kind == "as_built":
        form.pe_certified.label.text = profile_of(permit).cited(PE_STAMP, "as_built_submission")
    if kind == "final_report":
        form.inspection_id.choices = [SelectChoice("", "— choose —")] + [
            SelectChoice(i.id, f"Final inspection of {local_time(i.performed_at)}, {i.inspector_name}")
            for i in services.final_inspections(permit)]
    return form


def _page(permit: Permit, status_code: int = 200, **forms):
    """The completion page; a form passed in (with its errors) replaces the blank one."""
    profile = profile_of(permit)
    context = {f"{kind}_form": _submit_form(permit, kind) for kind in profile.completion.submissions}
    context |= {"review_forms": {}, "review_form": lambda s: ReviewForm(prefix=f"review-{s.id}", formdata=None),
                "certificate_form": CertificateForm(prefix="certificate"),
                "surety_form": SuretyReleaseForm(prefix="surety"), "waivers": {}}
    context |= forms
    record = services.completion_record(permit)
    try:  # the required inspections never made, to waive with their reasons (none once issued)
        context["not_made"] = [] if record.certificate else services.inspections_not_made(permit)
    except services.CompletionError as error:
        context["not_made"], context["not_made_problem"] = [], str(error)
    # The open gates, each with a link to where it is closed: the certificate cannot be issued until none is.
    context["gates"] = [] if record.certificate else [
        (gate, url_for(GATE_PLACES[gate.key][0], permit_id=permit.id, _anchor=GATE_PLACES[gate.key][1]))
        for gate in services.gates_open(permit)]
    return render_template("completion/page.html", permit=permit, record=record,
                           registry=profile.registry_of_deeds, kinds=_shown(record), asked=record.kinds,
                           profile=profile,
                           names=SUBMISSION_KIND_LABELS, citations=services.kind_citations(profile),
                           **context), status_code


def _done(permit: Permit):
    db.session.commit()
    return redirect(url_for("completion.page", permit_id=permit.id), code=303)


@bp.get("/")
def page(permit_id: str):
    """The permit's final submissions, certificate of completion and surety."""
    return _page(permit_or_404(permit_id))


def _submitted(form, kind: str) -> dict:
    if kind == "final_report":
        return {"inspection": db.session.get(Inspection, form.inspection_id.data)}
    # Read one byte past the limit: enough to know the file is too large without holding more of it.
    fields = {"pdf": form.pdf.data.read(services.max_pdf_bytes() + 1)}
    if kind == "om_plan":
        fields["registry_reference"] = form.registry_reference.data
    else:
        fields["pe_certified"] = form.pe_certified.data
    return fields


@bp.post("/submit/<kind>")
def submit(permit_id: str, kind: str):
    """File the final O&M plan, the as-built drawings or the final inspection report (§380-18)."""
    permit = permit_or_404(permit_id, "completion.submit")
    if kind not in SUBMIT_FORMS or kind not in profile_of(permit).completion.submissions:
        abort(404)  # a submission the town's regulation does not ask for has no form (nor place) here
    form = _submit_form(permit, kind)
    if form.validate_on_submit():
        try:
            services.submit(current_user, permit, kind, **_submitted(form, kind))
        except services.CompletionError as error:
            (form[error.field].errors if error.field in form else form.form_errors).append(str(error))
        else:
            return _done(permit)
    return _page(permit, 422, **{f"{kind}_form": form})


@bp.post("/submissions/<submission_id>/review")
def review(permit_id: str, submission_id: str):
    """Accept a final submission, or reject it with a note (agents)."""
    permit = permit_or_404(permit_id, "completion.review")
    submission = _submission(permit, submission_id)
    form = ReviewForm(prefix=f"review-{submission.id}")
    if form.validate_on_submit():
        try:
            services.review(current_user, submission, form.decision.data, form.note.data)
        except services.CompletionError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            return _done(permit)
    return _page(permit, 422, review_forms={submission.id: form})


@bp.get("/submissions/<submission_id>/pdf")
def pdf(permit_id: str, submission_id: str):
    """The stored PDF of a final submission."""
    permit = permit_or_404(permit_id)
    submission = _submission(permit, submission_id)
    if not submission.blob_sha256:
        abort(404)
    try:
        return files.send_blob(submission.blob_sha256, mimetype="application/pdf",
                               download_name=f"{permit.number}-{submission.kind.replace('_', '-')}.pdf")
    except FileNotFoundError:
        abort(404)


@bp.post("/certificate")
def certificate(permit_id: str):
    """Issue the certificate of completion once all three final submissions are accepted and each required
    inspection never made is waived with its reason (agents)."""
    permit = permit_or_404(permit_id, "certificate.issue")
    form = CertificateForm(prefix="certificate")
    waivers = form.waivers(request.form)
    if form.validate_on_submit():
        try:
            services.issue_certificate(current_user, permit, form.note.data, waivers)
        except services.CompletionError as error:
            (form.note.errors if error.field == "note" else form.form_errors).append(str(error))
        else:
            return _done(permit)
    return _page(permit, 422, certificate_form=form, waivers=waivers)


@bp.post("/surety")
def surety(permit_id: str):
    """Record a release of surety for a completed phase, or the final release (agents)."""
    permit = permit_or_404(permit_id, "surety.release")
    form = SuretyReleaseForm(prefix="surety")
    if form.validate_on_submit():
        try:
            services.release_surety(current_user, permit, form.amount.data, form.phase.data, form.is_final.data)
        except services.CompletionError as error:
            getattr(form, error.field).errors.append(str(error))
        else:
            return _done(permit)
    return _page(permit, 422, surety_form=form)
