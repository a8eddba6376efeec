"""Pages of the documents domain."""
from flask import Blueprint

bp = Blueprint("documents", __name__)
