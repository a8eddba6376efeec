"""Pages of the completion domain."""
from flask import Blueprint

bp = Blueprint("completion", __name__)
