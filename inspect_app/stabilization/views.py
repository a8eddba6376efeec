"""Pages of the stabilization domain."""
from flask import Blueprint

bp = Blueprint("stabilization", __name__)
