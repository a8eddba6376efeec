"""The WSGI entry point for gunicorn: `gunicorn wsgi:app`."""
from inspect_app import create_app

app = create_app()
