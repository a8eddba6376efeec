"""Pages of the certifications domain."""
from flask import Blueprint

bp = Blueprint("certifications", __name__)
