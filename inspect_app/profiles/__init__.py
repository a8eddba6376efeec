"""Town rule profiles: one TOML file per town beside this module, loaded and checked at start-up.

A profile that cannot be used stops the app with a `ProfileError` naming the file, the field and what
is wrong, so a town's clerk can fix the data without reading a traceback.
"""
from __future__ import annotations

import re
import tomllib
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from inspect_app.profiles.schema import INSPECTION_TYPE_KEYS, Profile

__all__ = ["INSPECTION_TYPE_KEYS", "Profile", "ProfileError", "load_profile", "load_profiles"]

PROFILE_FOLDER = Path(__file__).parent

# pydantic's wording for the problems a hand-edited file most often has, in a clerk's words.
_PROBLEMS = {
    "missing": "required field is missing",
    "extra_forbidden": "unknown field (check the spelling; the schema has no such field)",
    "model_type": "should be a table of its own fields, e.g. [stabilization] with days and citation",
}
_TOML_POSITION = re.compile(r"^(?P<what>.*) \(at line (?P<line>\d+), column (?P<column>\d+)\)$")


class ProfileError(Exception):
    """A profile file that cannot be used; the message names the file, the field and the problem."""


def load_profiles(folder: Path | None = None, *, extra: Path | str | None = None) -> dict[str, Profile]:
    """Load and validate every `*.toml` profile in `folder` (default: this package), keyed by profile key.

    `extra` (the PROFILE_DIR setting) is a folder of further towns *added* to those: a town is a TOML
    file, no code. A key, or a town's name, claimed twice, within or across the folders, stops the app with both
    files named.
    """
    folder = PROFILE_FOLDER if folder is None else folder
    paths = sorted(folder.glob("*.toml"))
    if not paths:
        raise ProfileError(f"{folder}: no *.toml profile files found")
    if extra is not None:
        extra = Path(extra)
        if not extra.is_dir():
            raise ProfileError(f"{extra}: PROFILE_DIR is not a folder")
        added = sorted(extra.glob("*.toml"))
        if not added:
            raise ProfileError(f"{extra}: no *.toml profile files found")
        paths += added
    profiles: dict[str, Profile] = {}
    claimed_by: dict[str, Path] = {}
    named_by: dict[str, Path] = {}
    for path in paths:
        profile = load_profile(path)
        if profile.key in profiles:
            raise ProfileError(
                f"{path}: key: {profile.key!r} is already claimed by {claimed_by[profile.key]};"
                " each town needs its own key"
            )
        # A profile copied with its key changed and its town's name left: two towns of one name, which the
        # imports (a town named by key or name) and every page and document would confuse.
        name = profile.town.strip().lower()
        if name in named_by:
            raise ProfileError(f"{path}: town: {profile.town!r} is already the name of the town of {named_by[name]};"
                               " each town needs its own name")
        profiles[profile.key] = profile
        claimed_by[profile.key] = path
        named_by[name] = path
    return profiles


def load_profile(path: Path) -> Profile:
    """Read one profile file and validate it against the schema."""
    try:
        content = path.read_bytes()
    except OSError as error:
        raise ProfileError(f"{path}: cannot be read: {error.strerror}") from None
    try:
        return _profile_of(content)
    except tomllib.TOMLDecodeError as error:
        raise ProfileError(f"{path}: {_describe_toml_error(error)}") from None
    except UnicodeDecodeError as error:
        raise ProfileError(f"{path}: is not UTF-8 text: {error}") from None
    except MissingClause as error:
        raise ProfileError("\n".join(f"{path}: {name}: required: the town's own clause (no other town's is cited "
                                      "for it)" for name in error.names)) from None
    except ValidationError as error:
        lines = [f"{path}: {_field_path(issue['loc'])}: {_problem(issue)}" for issue in error.errors()]
        raise ProfileError("\n".join(lines)) from None


@lru_cache(maxsize=32)
def _profile_of(content: bytes) -> Profile:
    """The profile a file's text makes. The same text makes the same profile (frozen), so an app made again
    in the same process (a test, a CLI command within the app) reads and checks each town's file once."""
    data = tomllib.loads(content.decode("utf-8"))
    # What a town's file must say itself: left out, the schema's defaults cited Longmeadow's clauses as its own.
    missing = [f"{table}.{name}" for table, names in TOWN_MUST_SAY.items() for name in names
               if not isinstance(data.get(table), dict) or name not in data[table]]
    if missing:
        raise MissingClause(missing)
    return Profile.model_validate(data)


TOWN_MUST_SAY = {"completion": ("citation", "easements_citation")}


class MissingClause(ValueError):
    """A town's file leaves out a clause of its own (`TOWN_MUST_SAY`)."""

    def __init__(self, names: list[str]) -> None:
        super().__init__(names)
        self.names = names


def _describe_toml_error(error: tomllib.TOMLDecodeError) -> str:
    # tomllib in Python 3.11 puts the position only in the message text: "... (at line 3, column 7)".
    match = _TOML_POSITION.match(str(error))
    if match is None:
        return f"TOML syntax error: {error}"
    return f"line {match['line']}, column {match['column']}: TOML syntax error: {match['what']}"


def _field_path(loc: tuple[int | str, ...]) -> str:
    """pydantic's location as the reader writes it: `inspection_types[2].checklist[0].citation`."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path or "(whole profile)"


def _problem(issue: dict[str, Any]) -> str:
    kind = issue["type"]
    if kind in ("missing", "extra_forbidden"):
        return _PROBLEMS[kind]
    if kind == "value_error":  # our own checks in schema.py already say what is wrong
        return issue["msg"].removeprefix("Value error, ")
    return f"{_PROBLEMS.get(kind, issue['msg'])} (got {_short(issue['input'])})"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
