"""Error pages in plain words; a refused request never shows a stack trace."""
from __future__ import annotations

from flask import Flask, render_template
from flask_wtf.csrf import CSRFError


def register(app: Flask) -> None:
    @app.errorhandler(400)
    def bad_request(error):
        return render_template("errors/400.html", error=error, description=getattr(error, "description", None)), 400

    @app.errorhandler(CSRFError)
    def csrf_error(error):
        return render_template("errors/400.html", error=error, description=getattr(error, "description", None)), 400

    @app.errorhandler(403)
    def forbidden(error):
        return render_template("errors/403.html", error=error, description=getattr(error, "description", None)), 403

    @app.errorhandler(404)
    def not_found(error):
        return render_template("errors/404.html", error=error, description=getattr(error, "description", None)), 404

    @app.errorhandler(500)
    def server_error(error):
        return render_template("errors/500.html", error=error, description=getattr(error, "description", None)), 500
