"""Signing in and out."""
from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, redirect, render_template, request, url_for
from flask_login import current_user, login_required, login_user, logout_user

from inspect_app.accounts import throttle
from inspect_app.accounts.forms import LoginForm
from inspect_app.accounts.models import User
from inspect_app.accounts.services import authenticate, end_sessions
from inspect_app.extensions import db, login_manager

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


@bp.route("/login", methods=["GET", "POST"])
def login():
    """Show the sign-in form and sign people in (too many failures: a 429 saying when to try again)."""
    form = LoginForm()
    if form.validate_on_submit():
        taken = throttle.take(form.email.data)
        user = authenticate(form.email.data, form.password.data)
        if user is not None:
            throttle.give_back(taken)
            login_user(user, remember=form.remember.data)
            return redirect(_safe_next(request.args.get("next")), code=303)
        form.password.errors.append("Email or password is not right.")
    status = 422 if form.errors else 200
    return render_template("accounts/login.html", form=form), status


@bp.post("/logout")
@login_required
def logout():
    """Sign out, here and on every other device (a copied cookie stops working too)."""
    end_sessions(current_user)
    db.session.commit()
    logout_user()
    return redirect(url_for("accounts.login"), code=303)
