"""Pages of the weather domain."""
from flask import Blueprint

bp = Blueprint("weather", __name__)
