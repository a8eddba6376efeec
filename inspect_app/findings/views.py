"""Pages of the findings domain."""
from flask import Blueprint

bp = Blueprint("findings", __name__)
