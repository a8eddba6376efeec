"""Every listed clause has a rule and a test, and docs/traceability.md is what `flask rules trace` writes."""
from __future__ import annotations

import importlib

from inspect_app.traceability import ROOT, RULE_MODULES, collect_rules, load_clauses, render


def test_every_listed_clause_has_a_rule_and_a_test_and_the_document_is_current() -> None:
    clauses = load_clauses(ROOT / "docs" / "clauses.toml")
    assert len(clauses) >= 20 and len({c.id for c in clauses}) == len(clauses)
    text = render()
    missing = [line.split(" | ")[0].lstrip("| ") for line in text.splitlines() if "**none**" in line]
    assert missing == [], f"clauses without a rule or a test: {missing}"
    assert (ROOT / "docs" / "traceability.md").read_text(encoding="utf-8") == text, (
        "docs/traceability.md is stale: run `flask rules trace`")


def test_a_rule_names_only_listed_clauses() -> None:
    listed = {c.id for c in load_clauses(ROOT / "docs" / "clauses.toml")}
    named = collect_rules(importlib.import_module(name) for name in RULE_MODULES)
    assert set(named) <= listed, sorted(set(named) - listed)
