"""Offline-first pages: the service worker, the offline page, the outbox, permits held on the device, and
the answer to a form posted with no server (the worker keeps the post; the outbox sends it later).

Every answer of the app says who is signed in (`Signed-In-As`: their id, empty for no one): the service worker
reads it to serve the pages held on the device to that person alone (static/sw.js, docs/sync.md)."""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

from flask import Blueprint, current_app, jsonify, render_template, request, url_for
from flask_login import current_user, login_required
from sqlalchemy import inspect as sa_inspect
from sqlalchemy import select

from inspect_app.accounts.policy import allowed, shown, visible_permits
from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Finding
from inspect_app.inspections import queries
from inspect_app.permits.models import Permit
from inspect_app.types import utcnow

bp = Blueprint("offline", __name__)
# Enough for any one inspector's assignments; an agent's whole town would not fit on a tablet anyway.
MAX_HELD_PERMITS = 200
# Pages every held permit needs besides its own: the lists, the outbox and this page.
COMMON_PAGES = ("permits.index", "offline.outbox", "offline.held")
# The static files of the worker's app shell ("/static/app.js" in its SHELL list), and its version line.
SHELL_FILE = re.compile(r'"/static/([^"]+)"')
VERSION_LINE = re.compile(r'^const VERSION = "[^"]*";$', re.MULTILINE)
# The worker's wait for a server before it counts it as gone (its own value unless OFFLINE_SERVER_TIMEOUT_MS says).
TIMEOUT_LINE = re.compile(r"^const NETWORK_TIMEOUT_MS = \d+;", re.MULTILINE)
# A permittee's home (it sends everyone else to the permit list, which the worker would not keep).
PERMITTEE_PAGES = ("permittee.my_permits",)
# The inspector's day: its Start buttons lead, offline, to the held new reports of their permits.
INSPECTOR_PAGES = ("dashboard.my_day",)
# The header naming who is signed in (static/formstore.js: SignedIn.HEADER).
SIGNED_IN_AS = "Signed-In-As"


@bp.after_app_request
def _say_who_is_signed_in(response):
    """Tell the device who this answer was made for (static files are no one's)."""
    if request.endpoint != "static":
        response.headers[SIGNED_IN_AS] = _signed_in_id(current_user._get_current_object())
    return response


def _signed_in_id(user) -> str:
    """The id of the person the request was answered for, "" for no one. Read from the session's identity
    map, not the row: a form post's commit expired the user, and reading them back cost a query per post.
    Whoever the request began with was signed in and enabled (`accounts.views.load_user`); one who signed
    out during it is no one (`logout_user`)."""
    if user is None or user.is_anonymous:
        return ""
    identity = sa_inspect(user).identity
    return str(identity[0]) if identity else user.id


@bp.get("/sw.js")
def service_worker():
    """Serve the service worker from the root so it controls every page of the app.

    Its VERSION is a digest of the app-shell files it caches: a release that changes any of them
    changes the worker's bytes, so every device installs the new worker and takes the new shell at once
    (the shell is served from the cache, so a kept version would keep old scripts for one more load).
    """
    static = Path(current_app.static_folder)
    script = (static / "sw.js").read_text(encoding="utf-8")
    digest = hashlib.sha256()
    for name in sorted(set(SHELL_FILE.findall(script))):
        path = static / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b""))
    script = VERSION_LINE.sub(f'const VERSION = "{digest.hexdigest()[:16]}";', script, count=1)
    timeout_ms = current_app.config.get("OFFLINE_SERVER_TIMEOUT_MS")
    if timeout_ms:
        script = TIMEOUT_LINE.sub(f"const NETWORK_TIMEOUT_MS = {int(timeout_ms)};", script, count=1)
    return script, 200, {"Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-cache"}


@bp.get("/offline")
def offline():
    """The page shown for a page that is not saved on this device while offline."""
    return render_template("offline.html")


@bp.get("/offline/saved")
def saved():
    """The answer to a form posted with no server: the post waits on the device (the worker keeps it).

    `?part=1`: the same words as a fragment, for a form that htmx posts in place."""
    return render_template("offline/_saved.html" if request.args.get("part") else "offline/saved.html")


@bp.get("/outbox")
def outbox():
    """Work saved on this device and waiting to be sent; the list itself is drawn from IndexedDB."""
    return render_template("offline/outbox.html")


@bp.get("/offline/")
@login_required
def held():
    """What this device holds for offline use, how fresh, and the one tap that holds every permit."""
    return render_template("offline/held.html")


@bp.get("/offline/pages.json")
def pages():
    """The URLs the worker must cache so the user's permits can be inspected offline."""
    if not current_user.is_authenticated:
        return jsonify({"error": "Sign in first."}), 401
    query = visible_permits(current_user).order_by(Permit.number).limit(MAX_HELD_PERMITS)
    permits = list(db.session.scalars(query))
    reports = _reports_with_open_actions([p.id for p in permits])
    held_permits = [_permit_pages(p, reports.get(p.id, set())) for p in permits]
    names = (COMMON_PAGES + (PERMITTEE_PAGES if allowed(current_user, "permit.list_mine") else ())
             + (INSPECTOR_PAGES if allowed(current_user, "dashboard.my_day") else ()))
    common = [url_for(name) for name in names if name in current_app.view_functions]
    return jsonify({"user": current_user.id, "permits": held_permits, "common": common,
                    "listed_at": utcnow().isoformat()})


def _reports_with_open_actions(permit_ids: list[str]) -> dict[str, set[str]]:
    """The reports whose corrective actions are not verified yet, by permit: one query for them all.

    Not someone else's draft: that report's page is not theirs to hold.
    """
    rows = db.session.execute(
        select(CorrectiveAction.permit_id, Finding.inspection_id).join(Finding, CorrectiveAction.finding_id == Finding.id)
        .where(CorrectiveAction.permit_id.in_(permit_ids), CorrectiveAction.status != "verified",
               shown(current_user, CorrectiveAction)))
    found: dict[str, set[str]] = {}
    for permit_id, inspection_id in rows:
        found.setdefault(permit_id, set()).add(inspection_id)
    return found


def _permit_pages(permit: Permit, open_action_reports: set[str]) -> dict:
    """One permit's pages: its page, a new-inspection form per type, the reports of open actions, the O&M pages
    the user may use (§380-14: the plan, the maintenance log, the annual certification), and the page recording
    frozen conditions and snowmelt for those who may record them."""
    forms = [url_for("inspections.new", permit_id=permit.id, inspection_type=k.key)
             for k in queries.startable(permit)
             if allowed(current_user, queries.action_for(k.key), permit)]
    reports = {url_for("inspections.detail", inspection_id=i) for i in open_action_reports}
    om = [url_for("certifications.plan", permit_id=permit.id)]
    if allowed(current_user, "om.log", permit):
        om.append(url_for("certifications.log", permit_id=permit.id))
    if allowed(current_user, "om.certify", permit):
        om.append(url_for("certifications.certify_form", permit_id=permit.id))
    # A snowmelt discharge or frozen ground is seen on site, where the network may not reach (CGP 2022 Part 4).
    conditions = ([url_for("conditions.page", permit_id=permit.id)]
                  if allowed(current_user, "conditions.record", permit) else [])
    urls = [url_for("permits.detail", permit_id=permit.id), *forms, *sorted(reports), *om, *conditions]
    return {"id": permit.id, "number": permit.number, "site_address": permit.site_address, "urls": urls}
