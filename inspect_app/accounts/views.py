"""Signing in and out."""
from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, current_app, flash, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user

from inspect_app.accounts import invitations
from inspect_app.accounts.forms import LoginForm, SetPasswordForm
from inspect_app.accounts.models import User
from inspect_app.accounts.services import authenticate, end_sessions
from inspect_app.extensions import db, limiter, login_manager

bp = Blueprint("accounts", __name__)
login_manager.login_view = "accounts.login"
login_manager.login_message = "Please log in to continue."


@login_manager.user_loader
def load_user(session_id: str) -> User | None:
    """The user of a session or remember cookie, unless its sessions were ended since it was made."""
    user_id, _, version = session_id.partition(":")
    user = db.session.get(User, user_id) if version else None
    if user is None or str(user.session_version) != version or not user.is_enabled:
        return None
    return user


def _safe_next(target: str | None) -> str:
    # Only same-site paths: never send someone to another host after logging in.
    if target and target.startswith("/") and not target.startswith("//") and not urlsplit(target).netloc:
        return target
    return url_for("home")


def _signin_limit() -> str:
    return current_app.config["SIGNIN_FAILURE_LIMIT"]


def _account() -> str:
    return "account:" + request.form.get("email", "").strip().lower()[:254]


def _failed(response) -> bool:
    return response.status_code == 422


# Failed sign-ins only (a 422) count, per address and per account: after a handful, 429 for the
# rest of the window, then the owner can sign in again (never locked out for good).
@bp.route("/login", methods=["GET", "POST"])
@limiter.limit(_signin_limit, methods=["POST"], deduct_when=_failed, scope="signin-address")
@limiter.limit(_signin_limit, key_func=_account, methods=["POST"], deduct_when=_failed, scope="signin-account")
def login():
    """Show the sign-in form and sign people in."""
    form = LoginForm()
    if form.validate_on_submit():
        user = authenticate(form.email.data, form.password.data)
        if user is not None:
            login_user(user, remember=True)
            return redirect(_safe_next(request.args.get("next")), code=303)
        form.password.errors.append("Email or password is not right.")
    status = 422 if form.errors else 200
    return render_template("accounts/login.html", form=form), status


@bp.route("/set-password/<token>", methods=["GET", "POST"])
def set_password(token: str):
    """Set one's own password through the link mailed to a new account (accounts/invitations.py)."""
    user = invitations.user_for_token(token)
    if user is None:
        return render_template("accounts/set_password.html", form=None), 404
    form = SetPasswordForm()
    if form.validate_on_submit():
        invitations.set_password(user, form.password.data)
        db.session.commit()
        logout_user()
        flash("Your password is set: log in with it.", "success")
        return redirect(url_for("accounts.login"), code=303)
    return render_template("accounts/set_password.html", form=form, user=user), 422 if form.errors else 200


@bp.post("/logout")
@login_required
def logout():
    """Sign out, here and on every other device (a copied cookie stops working too)."""
    end_sessions(current_user)
    db.session.commit()
    logout_user()
    return redirect(url_for("accounts.login"), code=303)
