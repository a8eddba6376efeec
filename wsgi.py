"""The WSGI entry point for gunicorn: `gunicorn --preload wsgi:app`. The app serves requests only: the
`flask` command's migrations (`flask db`) are left out of it (create_app's `commands`).

With `--preload` (docs/deploy/inspect-app.service) gunicorn's master makes the app once and forks its
workers from it: they start with the master's memory, shared until written, instead of each importing and
building everything again. Making the app reads the stored holidays, so the master's database connections
are closed here: a forked worker must open its own, never use one the master and its other workers hold.
"""
from inspect_app import create_app, freeze_startup_objects
from inspect_app.extensions import db

app = create_app(commands=False)
with app.app_context():
    for engine in db.engines.values():
        engine.dispose()
freeze_startup_objects()  # what a worker loaded stays for good: the collector need not walk it again
