"""Pages of the inspections domain."""
from flask import Blueprint

bp = Blueprint("inspections", __name__)
