"""Every listed clause has a rule and a test (or a written decision that the app does not enforce it), and
docs/traceability.md is what `flask rules trace` writes."""
from __future__ import annotations

import importlib

from inspect_app.traceability import ROOT, RULE_MODULES, collect_rules, load_clauses, names, render


def test_every_listed_clause_has_a_rule_and_a_test_and_the_document_is_current() -> None:
    clauses = load_clauses(ROOT / "docs" / "clauses.toml")
    assert len(clauses) >= 60 and len({c.id for c in clauses}) == len(clauses)
    text = render()
    missing = [line.split(" | ")[0].lstrip("| ") for line in text.splitlines() if "**none**" in line]
    assert missing == [], f"clauses without a rule or a test: {missing}"
    assert (ROOT / "docs" / "traceability.md").read_text(encoding="utf-8") == text, (
        "docs/traceability.md is stale: run `flask rules trace`")


def test_a_rule_names_only_listed_clauses_and_never_one_declared_procedural() -> None:
    clauses = load_clauses(ROOT / "docs" / "clauses.toml")
    named = collect_rules(importlib.import_module(name) for name in RULE_MODULES)
    assert set(named) <= {c.id for c in clauses}, sorted(set(named) - {c.id for c in clauses})
    procedural = {c.id for c in clauses if c.procedural}
    assert set(named) & procedural == set(), "a clause with a rule is not procedural"
    assert all(len(c.procedural) >= 20 for c in clauses if c.procedural), "say why the app does not enforce it"


def test_a_test_names_a_clause_itself_not_only_a_finer_one() -> None:
    assert names("stop-work order (§380-16 C(4)(e)[5])", "§380-16 C(4)(e)[5]")
    assert not names("stop-work order (§380-16 C(4)(e)[5])", "§380-16 C(4)(e)")
    assert names("the final inspection (§380-16 C(4)(e)): a PE signs", "§380-16 C(4)(e)")
    assert not names("CGP 2022 Part 4.7.1: report in 24 h", "CGP 2022 Part 4.7")
    assert names("CGP 2022 Part 4.7.", "CGP 2022 Part 4.7")
    assert not names("§380-14 C(2)(l)", "§380-14 C(2)")
