"""The service worker and the offline page."""
from pathlib import Path

from flask import Blueprint, current_app, render_template

bp = Blueprint("offline", __name__)


@bp.get("/sw.js")
def service_worker():
    """Serve the service worker from the root so it controls every page of the app."""
    script = Path(current_app.static_folder, "sw.js").read_bytes()
    return script, 200, {"Content-Type": "text/javascript; charset=utf-8", "Cache-Control": "no-cache"}


@bp.get("/offline")
def offline():
    """The page shown for a page that is not saved on this device while offline."""
    return render_template("offline.html")
