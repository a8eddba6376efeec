"""The structure the code keeps: an inspection type is declared once (inspect_app/inspection_types.py) and the
code asks that declaration, never the type's key. The test reads the source for the keys written as string
literals outside the registry and the towns' profiles, where their words and defaults live."""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

from inspect_app import inspection_types

ROOT = Path(__file__).resolve().parents[1]
ALLOWED = (ROOT / "inspect_app" / "inspection_types.py", ROOT / "inspect_app" / "profiles")
# Modules that still name a type's key, on their way to the registry (issue 30). The list only shrinks: a module
# that no longer names a key must leave it, and any other module that names one fails the test. Some name a word
# of another vocabulary spelled like a type (an obligation "pre_bury", a waivable requirement, a "final"
# stop-work order); they leave the list when those vocabularies are declared in registries of their own.
NOT_YET_MOVED = {
    "inspect_app/demo.py", "inspect_app/labels.py",
    "inspect_app/rules/engine.py", "inspect_app/schedule/missed.py",
    "inspect_app/templating.py", "inspect_app/waivers/services.py",
}


def _python_literals(text: str) -> set[str]:
    """The plain one-line string literals of a Python module (docstrings, f-strings and prefixed ones left out)."""
    strings = (token.string for token in tokenize.generate_tokens(io.StringIO(text).readline)
               if token.type == tokenize.STRING)
    return {string[1:-1] for string in strings if string[:1] in "'\"" and string[:3] not in ("'''", '"""')}


def _template_literals(text: str) -> set[str]:
    return set(re.findall(r"""['"]([a-z_]+)['"]""", text))


def naming_a_type(root: Path = ROOT) -> dict[str, list[str]]:
    """Source files (app and sync, Python and templates) that write a type's key as a string: path → keys."""
    found = {}
    files = [*(root / "inspect_app").rglob("*.py"), *(root / "sync").rglob("*.py"),
             *(root / "inspect_app" / "templates").rglob("*.html")]
    for path in files:
        if any(path == allowed or allowed in path.parents for allowed in ALLOWED):
            continue
        text = path.read_text(encoding="utf-8")
        literals = _python_literals(text) if path.suffix == ".py" else _template_literals(text)
        keys = sorted(literals & set(inspection_types.KEYS))
        if keys:
            found[str(path.relative_to(root))] = keys
    return found


def test_no_module_switches_on_an_inspection_type_key_outside_the_registry():
    """A new module that tests a type's key (`inspection.type == "final"`) fails: ask the registry instead."""
    switching = naming_a_type()
    unexpected = {path: keys for path, keys in switching.items() if path not in NOT_YET_MOVED}
    assert unexpected == {}, "ask inspect_app.inspection_types.spec(key) instead of testing the key"


def test_the_list_of_modules_not_yet_moved_only_shrinks():
    """A module moved to the registry leaves the list, so it cannot start switching again unnoticed."""
    assert sorted(NOT_YET_MOVED - set(naming_a_type())) == []


DOCUMENT_KINDS = ("inspection_report", "stop_work_order", "certificate_of_completion", "om_certification",
                  "permit_history")
# schedule/facts.py compares an obligation's subject "om_certification" (the schedule's word, spelled like the
# document kind): not a document switch.
DOCUMENT_SWITCH_ALLOWED = {"inspect_app/schedule/facts.py": {"om_certification"}}


def comparing_a_document_kind(root: Path = ROOT) -> dict[str, list[str]]:
    """Source files that compare something with a document kind's key (`kind == "inspection_report"`)."""
    switch = re.compile(r"""[=!]=\s*['"](%s)['"]""" % "|".join(DOCUMENT_KINDS))
    found = {}
    for path in [*(root / "inspect_app").rglob("*.py"), *(root / "sync").rglob("*.py"),
                 *(root / "inspect_app" / "templates").rglob("*.html")]:
        name = str(path.relative_to(root))
        keys = sorted(set(switch.findall(path.read_text(encoding="utf-8"))) - DOCUMENT_SWITCH_ALLOWED.get(name, set()))
        if keys:
            found[name] = keys
    return found


def test_no_module_switches_on_a_document_kind():
    """What differs by document kind is declared once (documents/services.py `KINDS`); nothing tests the key."""
    assert comparing_a_document_kind() == {}
