"""Downloads of the town's documents as PDF (inspection report, stop-work order, certificate, O&M, history),
and the public page that verifies a frozen document (`/verify/<document id>`, no sign-in)."""
from __future__ import annotations

import io
from collections.abc import Sequence

from flask import Blueprint, abort, current_app, redirect, render_template, request, send_file, url_for
from flask_login import current_user, login_required

from inspect_app.accounts.policy import permit_or_404
from inspect_app.certifications.models import OMCertification
from inspect_app.completion.models import CertificateOfCompletion
from inspect_app.documents import services
from inspect_app.documents.forms import VerifyUploadForm
from inspect_app.enforcement.models import StopWorkOrder
from inspect_app.extensions import db, limiter
from inspect_app.inspections.models import Inspection
from inspect_app.inspections.queries import ListedReport
from inspect_app.permits.models import Permit
from inspect_app.types import local

bp = Blueprint("documents", __name__, url_prefix="/documents")


@bp.before_request
@login_required
def _signed_in() -> None:
    """Every document needs a signed-in user."""


def section(permit: Permit, reports: Sequence[ListedReport], orders: Sequence[StopWorkOrder],
            certificate: CertificateOfCompletion | None) -> dict:
    """What the permit page shows of documents: a download for each the current user may see, with one for
    each of `reports` (the permit's reports the current user sees, newest first: the inspections section's),
    of `orders` (its stop-work orders, newest first) and of its certificate of completion, if issued."""
    return {"downloads": services.downloads(permit, reports, orders, certificate)}


@bp.errorhandler(services.AlteredDocument)
def _altered(error: services.AlteredDocument):
    """A frozen document whose stored file is not the PDF frozen is refused, not served as the document."""
    current_app.logger.error("document %s: %s", error.document.id, error)
    return render_template("documents/altered.html"), 500


def _pdf(data: bytes, name: str):
    response = send_file(io.BytesIO(data), mimetype="application/pdf", as_attachment=True, download_name=name)
    response.headers["Cache-Control"] = "private, no-store"
    return response


@bp.get("/inspections/<inspection_id>.pdf")
def inspection_report(inspection_id: str):
    """The inspection report as PDF."""
    inspection = db.get_or_404(Inspection, inspection_id)
    permit = permit_or_404(inspection.permit_id)
    if not services.inspection_visible(current_user, inspection):
        abort(404)
    name = services.filename("inspection", permit.number, inspection.type.replace("_", "-"),
                             f"{local(inspection.performed_at):%Y%m%d-%H%M}")
    return _pdf(services.report_download_pdf(inspection), name)


@bp.get("/stop-work-orders/<order_id>.pdf")
def stop_work_order(order_id: str):
    """The notice of violation and stop-work order as PDF."""
    order = db.get_or_404(StopWorkOrder, order_id)
    permit = permit_or_404(order.permit_id)
    name = services.filename("stop-work-order", permit.number, f"{local(order.issued_at):%Y%m%d}")
    return _pdf(services.stop_work_order_pdf(order), name)


@bp.get("/permits/<permit_id>/certificate.pdf")
def certificate(permit_id: str):
    """The certificate of completion as PDF; 404 until it is issued."""
    permit = permit_or_404(permit_id)
    data = services.certificate_pdf(permit)
    if data is None:
        abort(404, description="No certificate of completion has been issued for this permit.")
    return _pdf(data, services.filename("certificate-of-completion", permit.number))


@bp.get("/om-certifications/<certification_id>.pdf")
def om_certification(certification_id: str):
    """The annual O&M certification as PDF."""
    certification = db.get_or_404(OMCertification, certification_id)
    permit = permit_or_404(certification.permit_id)
    name = services.filename("om-certification", permit.number, f"{certification.period_start:%Y%m%d}")
    return _pdf(services.om_certification_pdf(certification), name)


@bp.post("/permits/<permit_id>/history")
def history(permit_id: str):
    """Make the permit's inspection history, frozen so that it can be verified (the current version while its
    record is unchanged), then download it: a POST, as it registers a document."""
    permit = permit_or_404(permit_id)
    document = services.history_document(permit)
    db.session.commit()
    return redirect(url_for("documents.frozen", document_id=document.id), code=303)


@bp.get("/frozen/<document_id>.pdf")
def frozen(document_id: str):
    """One frozen version of a document, byte for byte (earlier versions stay downloadable)."""
    document = services.visible_document(current_user, document_id)
    if document is None:
        abort(404)
    permit = permit_or_404(document.permit_id)
    name = services.filename(document.kind.replace("_", "-"), permit.number, f"{local(document.frozen_at):%Y%m%d-%H%M}")
    return _pdf(services.pdf_bytes(document), name)


public = Blueprint("verify", __name__)


def _verify_limit() -> str:
    return current_app.config["VERIFY_LIMIT"]


# Public and unauthenticated, and an upload is hashed: each address may ask a bounded number of times
# (a clerk checking a stack of documents stays well inside it), then a 429 saying when to try again.
@public.route("/verify/<document_id>", methods=["GET", "POST"])
@limiter.limit(_verify_limit, scope="verify", error_message="Too many verifications from this address")
def verify(document_id: str):
    """Whether a document is genuine: when and by whom signed, whether amended; compares an uploaded PDF."""
    form = VerifyUploadForm()
    found = services.verification(document_id, current_user)
    if found is None:
        # The same answer for an id never issued and for one the public may not see.
        return render_template("documents/verify.html", found=None, form=form), 404
    match, status = None, 200
    # The QR code of a frozen PDF adds the record's SHA-256: does the copy in hand carry the register's?
    given = request.args.get("sha256", "")
    printed = given.strip().lower() == found.document.record_sha256 if given else None
    if form.is_submitted():
        if form.validate():
            match = services.compare_upload(found.document, form.pdf.data.stream)
        else:
            status = 422
    return render_template("documents/verify.html", found=found, form=form, match=match, printed=printed), status
