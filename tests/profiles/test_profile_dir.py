"""PROFILE_DIR from the environment adds towns to the `flask` command and to the app servers (`wsgi.py`), as the
README says: a town made only of a TOML file, no code change."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from inspect_app.profiles import PROFILE_FOLDER

ROOT = Path(__file__).resolve().parents[2]
MILLBROOK = (PROFILE_FOLDER / "cgp_baseline.toml").read_text().replace(
    'key = "cgp_baseline"', 'key = "millbrook"').replace('town = "CGP Baseline"', 'town = "Millbrook"')


def _environment(tmp_path: Path) -> dict[str, str]:
    towns = tmp_path / "towns"
    towns.mkdir()
    (towns / "millbrook.toml").write_text(MILLBROOK)
    return {"DATABASE_URL": f"sqlite:///{tmp_path / 'towns.sqlite3'}", "BLOB_ROOT": str(tmp_path / "blobs"),
            "SECRET_KEY": "probe", "PATH": "/usr/bin:/bin", "PROFILE_DIR": str(towns), "FLASK_APP": "inspect_app",
            # an app server (wsgi.py) does not start without the town's public address
            "PUBLIC_URL": "https://inspections.example-town.gov"}


def _run(arguments: list[str], env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, *arguments], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_flask_command_and_the_app_servers_read_profile_dir_from_the_environment(tmp_path):
    env = _environment(tmp_path)
    _run(["-m", "flask", "db", "upgrade"], env)
    synced = _run(["-m", "flask", "towns", "sync"], env)
    assert "millbrook: Millbrook" in synced and "longmeadow: Longmeadow" in synced
    probe = "import json, wsgi; print(json.dumps(sorted(wsgi.app.extensions['profiles'])))"
    served = json.loads(_run(["-c", probe], env).splitlines()[-1])
    assert served == ["cgp_baseline", "longmeadow", "millbrook", "southborough"]
    # A name corrected in the profile: said, not applied behind the record's back (the sync's docstring said "names
    # kept current", and kept nothing); the name the signed reports carry, and hash, stays.
    towns = Path(env["PROFILE_DIR"])
    (towns / "millbrook.toml").write_text(MILLBROOK.replace('town = "Millbrook"', 'town = "Town of Millbrook"'))
    again = _run(["-m", "flask", "towns", "sync"], env)
    assert "millbrook: Millbrook" in again
    assert "note: the profile names it 'Town of Millbrook'; the record keeps 'Millbrook'" in again
    # A cron job whose environment lacks PROFILE_DIR: the timed commands refuse, and change nothing (the refresh
    # replaced the town's stored obligations with "The town profile 'millbrook' is not loaded." and ended well).
    without = {name: value for name, value in env.items() if name != "PROFILE_DIR"}
    for command in (["dashboard", "refresh"], ["compliance", "sweep"], ["weather", "backfill"], ["om", "remind"],
                    ["permits", "lapse"]):
        done = subprocess.run([sys.executable, "-m", "flask", *command], cwd=ROOT, env=without, capture_output=True,
                              text=True, timeout=180)
        assert done.returncode == 1, (command, done.stdout, done.stderr)
        assert "No town profile is loaded for 'millbrook': set PROFILE_DIR" in done.stderr, done.stderr

