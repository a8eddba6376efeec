"""Pages of the enforcement domain."""
from flask import Blueprint

bp = Blueprint("enforcement", __name__)
