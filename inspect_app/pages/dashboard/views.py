"""The town dashboard, the inspector's *my day*, a permit's timeline and the calendar/GIS exports."""
from __future__ import annotations

from flask import Blueprint, Response, abort, current_app, redirect, render_template, request, url_for
from flask_login import current_user
from jinja2_fragments.flask import render_block
from sqlalchemy import select

from inspect_app.accounts.models import User
from inspect_app.accounts.policy import allowed, people_to_choose, permit_or_404, require, visible_permits
from inspect_app.labels import OBLIGATION_KIND_LABELS
from inspect_app.pages.dashboard import exports, maps, services
from inspect_app.pages.now import answer_for
from inspect_app.extensions import db
from inspect_app.inputs import query_int
from inspect_app.links import public_host, public_link
from inspect_app.permits.models import Jurisdiction, Permit, PermitAssignment
from inspect_app.permits.services import profiles
from inspect_app.schedule.facts import subject_label
from inspect_app.types import utcnow

bp = Blueprint("dashboard", __name__)
# Where one URL serves the page and its htmx fragment, caches must keep the two apart.
VARY = {"Vary": "HX-Request, HX-Target"}


# The calendar subscription feed is read by calendar apps, which cannot sign in: its secret link is its key.
OPEN_ENDPOINTS = frozenset({"dashboard.calendar_feed"})


@bp.before_request
def _signed_in():
    """Every page here needs a signed-in user, but the calendar subscription feed."""
    if request.endpoint not in OPEN_ENDPOINTS and not current_user.is_authenticated:
        return current_app.login_manager.unauthorized()
    return None


def _filters() -> services.Filters:
    """The dashboard's query string, with anything unknown dropped rather than refused."""
    args = request.args
    kind, sort = args.get("kind", ""), args.get("sort", "late")
    return services.Filters(
        town=args.get("town", ""), inspector=args.get("inspector", ""),
        kind=kind if kind in OBLIGATION_KIND_LABELS else "", sort=sort if sort in services.SORTS else "late",
        upcoming=args.get("upcoming") == "1",
        days=query_int("days", 7, 1, 365, refuse=False),
        page=query_int("page", 1, 1, 100_000, refuse=False),
    )


@bp.get("/dashboard/")
def index():
    """Every due and overdue obligation across the permits the agent may see, most late first."""
    require("dashboard.view")
    filters = _filters()
    board = services.town_board(visible_permits(current_user), filters, utcnow())
    context = {"board": board, "filters": filters, "kinds": OBLIGATION_KIND_LABELS, "sorts": services.SORTS,
               "towns": _towns(), "inspectors": _inspectors(), "describe_late": services.describe_late}
    if request.headers.get("HX-Target") == "obligations":
        return render_block("dashboard/index.html", "obligations", in_place=True, **context), 200, VARY
    return render_template("dashboard/index.html", **context), 200, VARY


@bp.get("/dashboard/map")
def permit_map():
    """The permits the agent may see on a map, each coloured by the worst status of its open obligations,
    with the dashboard's filters."""
    require("dashboard.view")
    filters = _filters()
    statuses = services.permit_map(visible_permits(current_user), filters, utcnow())
    return render_template("dashboard/map.html", statuses=statuses, filters=filters, kinds=OBLIGATION_KIND_LABELS,
                           towns=_towns(), inspectors=_inspectors(), tiles=maps.tiles(),
                           center=maps.center([s.permit for s in statuses])), 200, VARY


def _towns() -> list[Jurisdiction]:
    query = select(Jurisdiction).order_by(Jurisdiction.name)
    if current_user.jurisdiction_id:
        query = query.where(Jurisdiction.id == current_user.jurisdiction_id)
    return list(db.session.scalars(query))


def _inspectors() -> list[User]:
    """The inspectors the filter offers: those the user may choose among (never those who work only in another
    town: their names are not this town's to read)."""
    return list(db.session.scalars(people_to_choose(current_user, "inspector")))


@bp.get("/dashboard/my-day")
def my_day():
    """The inspector's day: what is overdue or due today on the permits they are assigned to."""
    require("dashboard.my_day")
    board = services.my_day(visible_permits(current_user), utcnow())
    # A duty missed several times is one line (the next inspection meets them all), with what answers it.
    towns = profiles()
    items = [(each, answer_for(each.row.obligation.kind, towns[each.row.permit.profile_key]))
             for each in services.owed(board.rows)]
    return render_template("dashboard/my_day.html", board=board, items=items, kinds=OBLIGATION_KIND_LABELS,
                           describe_late=services.describe_late)


@bp.get("/permits/<permit_id>/timeline")
def timeline(permit_id: str):
    """Every obligation of one permit, met ones too, with due and met times, reason and citation."""
    permit = permit_or_404(permit_id)
    record, items = services.timeline(select(Permit).where(Permit.id == permit.id), utcnow())
    return render_template("dashboard/timeline.html", permit=permit, record=record, items=items,
                           now=utcnow(), kinds=OBLIGATION_KIND_LABELS, describe_late=services.describe_late,
                           subject_label=subject_label)


@bp.get("/dashboard/inspectors/<user_id>/calendar.ics")
def calendar(user_id: str):
    """An iCalendar feed of the inspections due on an inspector's permits (the inspector or their town)."""
    inspector = db.get_or_404(User, user_id)
    require("dashboard.calendar")
    if inspector.role != "inspector" or (current_user.id != inspector.id
                                         and not allowed(current_user, "dashboard.calendar.others")):
        abort(403)
    # An inspector works for no town: theirs is the calendar of a town whose permits they work on.
    assigned = select(PermitAssignment.permit_id).where(PermitAssignment.user_id == inspector.id)
    if db.session.scalar(visible_permits(current_user).where(Permit.id.in_(assigned)).limit(1)) is None \
            and current_user.id != inspector.id:
        abort(404)
    now = utcnow()
    rows = services.inspector_calendar(visible_permits(current_user), inspector.id, now)
    body = exports.icalendar(f"Inspections due: {inspector.name}", rows, now, _timeline_link, public_host())
    return Response(body, mimetype="text/calendar", headers={
        "Content-Disposition": f'inline; filename="inspections-{inspector.id}.ics"'})


@bp.post("/dashboard/my-day/calendar-link")
def new_calendar_link():
    """Make the inspector's calendar subscription link (again: the old link stops working)."""
    require("dashboard.my_day")
    services.new_calendar_key(current_user)
    db.session.commit()
    return redirect(url_for("dashboard.my_day") + "#calendar-link", code=303)


@bp.get("/calendar/<key>.ics")
def calendar_feed(key: str):
    """An inspector's calendar, for calendar apps: the secret key in the link stands for signing in."""
    inspector = db.session.scalar(select(User).where(User.calendar_key == key)) if len(key) <= 64 else None
    if inspector is None or not inspector.is_enabled or inspector.role != "inspector":
        abort(404)
    now = utcnow()
    rows = services.inspector_calendar(visible_permits(inspector), inspector.id, now)
    body = exports.icalendar(f"Inspections due: {inspector.name}", rows, now, _timeline_link, public_host())
    return Response(body, mimetype="text/calendar", headers={"Cache-Control": "private, max-age=900"})


def _timeline_link(permit_id: str) -> str:
    return public_link("dashboard.timeline", permit_id=permit_id)


@bp.get("/dashboard/permits.geojson")
def permits_geojson():
    """The permits the user may see as GeoJSON points, with their status and due/overdue counts, and the
    points of their disturbed areas and structures."""
    require("permit.view")
    now, scope = utcnow(), visible_permits(current_user)
    body = exports.geojson(services.permit_statuses(scope, now),
                           lambda pid: public_link("permits.detail", permit_id=pid),
                           services.site_places(scope, now))
    return Response(body, mimetype="application/geo+json",
                    headers={"Content-Disposition": 'attachment; filename="permits.geojson"'})


@bp.get("/dashboard/permits.csv")
def permits_csv():
    """The permits the user may see as CSV, with their status and due/overdue counts."""
    require("permit.view")
    body = exports.csv_text(services.permit_statuses(visible_permits(current_user), utcnow()))
    return Response(body, mimetype="text/csv",
                    headers={"Content-Disposition": 'attachment; filename="permits.csv"'})
