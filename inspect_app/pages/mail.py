"""The sent mail page: every message the app sent or stored, for admins (a town's admin: its town's)."""
from flask import Blueprint, render_template
from flask_login import current_user, login_required

from inspect_app.accounts.policy import require, visible_mail
from inspect_app.extensions import db
from inspect_app.inputs import query_int
from inspect_app.mail.models import OutboundEmail

bp = Blueprint("mail", __name__, url_prefix="/mail")


@bp.get("/")
@login_required
def sent():
    """List sent and stored messages, newest first."""
    require("mail.view")
    page = db.paginate(visible_mail(current_user).order_by(OutboundEmail.created_at.desc()),
                       page=query_int("page", 1, 1, 100_000, refuse=False), per_page=50, error_out=False)
    return render_template("mail/sent.html", page=page)
