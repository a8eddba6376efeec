"""Pages of the dashboard domain."""
from flask import Blueprint

bp = Blueprint("dashboard", __name__)
