"""The WSGI entry point for gunicorn: `gunicorn wsgi:app`. The app serves requests only: the `flask`
command's migrations (`flask db`) are left out of it (create_app's `commands`)."""
from inspect_app import create_app, freeze_startup_objects

app = create_app(commands=False)
freeze_startup_objects()  # what a worker loaded stays for good: the collector need not walk it again
