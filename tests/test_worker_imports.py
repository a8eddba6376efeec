"""What an app server's worker loads (issue 18: a worker's memory). `gunicorn wsgi:app` serves pages: it
does not load Alembic (the `flask db` command's), nor meteostat, pandas, numpy or requests (only the weather
fetcher process loads them: tests/weather/test_weather_stations.py looks weather up and shows the app process
still without them), nor reportlab (the first PDF it renders loads it), nor the AWS SDK when its files are on
disk (BLOB_BACKEND=disk, the default: only the S3 store loads it), nor the tools of the tests and
benches. The `flask` command still has `flask db`. (The holidays package: tests/schedule/test_stored_holidays.py.)"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("alembic", "flask_migrate", "mako", "meteostat", "pandas", "numpy", "requests", "reportlab",
         "locust", "schemathesis", "hypothesis", "pytest", "pypdf", "boto3", "botocore", "moto")


def test_the_wsgi_app_loads_no_migration_tool_no_weather_library_and_no_pdf_library(tmp_path):
    probe = "import json, sys, wsgi; print(json.dumps(sorted(m for m in sys.modules if '.' not in m)))"
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'probe.sqlite3'}", "BLOB_ROOT": str(tmp_path / "blobs"),
           "SECRET_KEY": "probe", "PUBLIC_URL": "https://inspections.example-town.gov", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout.splitlines()[-1]))
    assert "flask" in loaded and "sqlalchemy" in loaded  # the probe did load the app
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))


def test_the_flask_command_still_migrates(runner):
    result = runner.invoke(args=["db", "current"])
    assert result.exit_code == 0, result.output


def test_the_wsgi_module_leaves_no_database_connection_for_the_forked_workers(tmp_path):
    # gunicorn --preload makes the app in its master and forks the workers from it: a connection left open
    # there would be one socket written by several processes at once.
    probe = ("import wsgi\nfrom inspect_app.extensions import db\nwith wsgi.app.app_context():\n"
             "    print(db.engine.pool.checkedin(), db.engine.pool.checkedout())")
    env = {"DATABASE_URL": f"sqlite:///{tmp_path / 'probe.sqlite3'}", "BLOB_ROOT": str(tmp_path / "blobs"),
           "SECRET_KEY": "probe", "PUBLIC_URL": "https://inspections.example-town.gov", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "0"]
