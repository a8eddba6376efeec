"""Signing in and out, and changing one's password."""
from __future__ import annotations

from urllib.parse import urlsplit

from flask import Blueprint, current_app, flash, g, redirect, render_template, request, session, url_for
from flask_login import current_user, login_required, login_url, login_user, logout_user, user_loaded_from_cookie

from inspect_app.accounts import invitations, throttle
from inspect_app.accounts.forms import LoginForm, PasswordForm, SetPasswordForm
from inspect_app.accounts.models import User
from inspect_app.accounts.services import AccountError, authenticate, change_own_password, end_sessions, user_by_id
from inspect_app.extensions import db, login_manager
from inspect_app.idempotency import SIGNED_OUT, SignInNeeded

bp = Blueprint("accounts", __name__)
login_manager.login_view = "accounts.login"
login_manager.login_message = "Please log in to continue."
PASSWORD_CHANGED = ("Your password is changed. Every other sign-in of your account has ended, and your devices' "
                    "sync tokens no longer work: ask your administrator for new ones. A calendar link you made stops "
                    "working too: make a new one on My day.")


@login_manager.unauthorized_handler
def _sign_in_first():
    """A page asked for signed out: the sign-in form, then back to it. A form posted signed out (the sign-in
    expired while it was open) is not turned into a visit of the sign-in page, which would lose it: it is a 401
    that says so, and the device keeps the post to send after signing in again (static/sw.js)."""
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        raise SignInNeeded(description=SIGNED_OUT)
    flash(login_manager.login_message, login_manager.login_message_category)
    return redirect(login_url(login_manager.login_view, next_url=request.url))


@login_manager.user_loader
def load_user(session_id: str) -> User | None:
    """The user of a session or remember cookie, unless its sessions were ended since it was made."""
    user_id, _, version = session_id.partition(":")
    user = user_by_id(user_id) if version else None
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
            if user in db.session.dirty:  # its hash made again with the current method (accounts/passwords.py)
                db.session.commit()
            throttle.give_back(taken)  # after the commit: on SQLite the counter waits for the write lock
            _sign_in(user, remember=form.remember.data)
            return redirect(_safe_next(request.args.get("next")), code=303)
        form.password.errors.append("Email or password is not right.")
    status = 422 if form.errors else 200
    return render_template("accounts/login.html", form=form), status


# In the session: whom its CSRF token was last given to at a sign-in (a user id), and the tokens of the others who
# signed in on this browser before, by user id (a few: a shared tablet's crew).
TOKEN_OF, OTHERS_TOKENS, KEPT_TOKENS = "_token_of", "_tokens", 8


def _sign_in(user: User, remember: bool) -> None:
    """Sign `user` in on this browser, as the one person it now works for (`_token_for`).

    A remember-me cookie left by an earlier sign-in is dropped unless this person asks for one: once their own
    sign-in ends, it would sign the browser in again as the one who left it.
    """
    _token_for(user)
    if not remember and _remembered():
        session["_remember"] = "clear"  # Flask-Login removes the cookie with this answer
    login_user(user, remember=remember)


def _token_for(user: User) -> None:
    """Give the browser `user`'s CSRF token: the one they had when they last signed in here, or a new one.

    Pages a person opened keep working for them, also after others signed in and out meanwhile on the tablet. A
    page left open from someone else's sign-in posts a token that is not this person's, and nothing it sends is
    taken as theirs (a form naming its author is answered 401, errors.py; any other, 400).
    """
    owner = session.get(TOKEN_OF)
    if owner == user.id:
        return
    field = current_app.config["WTF_CSRF_FIELD_NAME"]
    others = dict(session.get(OTHERS_TOKENS) or {})
    current = session.pop(field, None)
    if owner and current:  # (a token given before anyone signed in is no one's: not kept)
        others[owner] = current
    mine = others.pop(user.id, None)
    if mine:
        session[field] = mine
    g.pop(field, None)  # Flask-WTF's signed copy for this request
    if others:
        session[OTHERS_TOKENS] = dict(list(others.items())[-KEPT_TOKENS:])
    else:
        session.pop(OTHERS_TOKENS, None)
    session[TOKEN_OF] = user.id


@user_loaded_from_cookie.connect
def _remembered_sign_in(_app, user: User) -> None:
    """Signed in again by their remember-me cookie (their session had ended): the browser's token is theirs."""
    _token_for(user)


@bp.route("/account/password", methods=["GET", "POST"])
@login_required
def password():
    """Change one's own password: every other session and every device token of the account ends."""
    form = PasswordForm()
    if form.validate_on_submit():
        # The current password is guessed no faster here than at sign-in: a wrong one counts as a failure.
        taken = throttle.take(current_user.email)
        try:
            change_own_password(current_user, form.current_password.data, form.new_password.data)
        except AccountError as error:
            wrong_current = error.field == "current_password"
            (form.current_password if wrong_current else form.new_password).errors.append(error.reason)
            if not wrong_current:
                throttle.give_back(taken)
        else:
            db.session.commit()
            throttle.give_back(taken)  # after the commit: on SQLite the counter waits for the write lock
            # This session goes on, with the account's new session version (and a new remember-me
            # cookie if it had one); every other session and cookie of the account has ended.
            login_user(current_user._get_current_object(), remember=_remembered())
            flash(PASSWORD_CHANGED, "success")
            return redirect(url_for("accounts.password"), code=303)
    return render_template("accounts/password.html", form=form), 422 if form.errors else 200


def _remembered() -> bool:
    return current_app.config.get("REMEMBER_COOKIE_NAME", "remember_token") in request.cookies


@bp.route("/set-password/<token>", methods=["GET", "POST"])
def set_password(token: str):
    """Set one's own password through the link mailed to a new account (accounts/invitations.py)."""
    user, problem = invitations.user_for_token(token)
    if user is None:
        return render_template("accounts/set_password.html", form=None, problem=problem,
                               link_days=invitations.LINK_DAYS), 404
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
