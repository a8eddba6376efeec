"""Pages of the photos domain."""
from flask import Blueprint

bp = Blueprint("photos", __name__)
