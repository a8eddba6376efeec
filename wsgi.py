"""The WSGI entry point for gunicorn: `gunicorn wsgi:app`. The app serves requests only: the `flask`
command's migrations (`flask db`) are left out of it (create_app's `commands`)."""
from inspect_app import create_app

app = create_app(commands=False)
