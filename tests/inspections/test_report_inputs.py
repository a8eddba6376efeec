"""The report form's own inputs (templating.report_*): what a screen reader and the form's post rely on."""
from __future__ import annotations

import datetime as dt
import re
from html.parser import HTMLParser
from types import SimpleNamespace

from inspect_app.templating import (report_answer_note, report_answers, report_fix, report_photo_input,
                                   report_text)

OPTIONS = [("yes", "Yes"), ("no", "No"), ("na", "N/A")]


class _Elements(HTMLParser):
    """Each start tag with its attributes, and the text of each element by its id."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: dict[str, str] = {}
        self._open: list[str | None] = []
        self.feed(str(html))

    def handle_starttag(self, tag, attrs) -> None:
        attributes = dict(attrs)
        self.tags.append((tag, attributes))
        if tag not in ("input", "br"):
            self._open.append(attributes.get("id"))

    def handle_endtag(self, tag) -> None:
        if self._open:
            self._open.pop()

    def handle_data(self, data) -> None:
        for element_id in self._open:
            if element_id:
                self.text[element_id] = self.text.get(element_id, "") + data

    def ids(self) -> set[str]:
        return {attrs["id"] for _, attrs in self.tags if attrs.get("id")}


def test_a_refused_answer_names_its_error_and_each_segment_is_a_labelled_radio():
    html = report_answers("answer-silt_fence-a1", "East line", OPTIONS, "no",
                          {"answer-silt_fence-a1": "Say why <not> inspected"})
    page = _Elements(html)
    fieldset = next(attrs for tag, attrs in page.tags if tag == "fieldset")
    assert "has-error" in fieldset["class"] and fieldset["aria-invalid"] == "true"
    assert fieldset["aria-describedby"] == "answer-silt_fence-a1-error"
    assert page.text["answer-silt_fence-a1-error"] == "Error: Say why <not> inspected"
    radios = [attrs for tag, attrs in page.tags if tag == "input"]
    labels = [attrs["for"] for tag, attrs in page.tags if tag == "label"]
    assert [r["value"] for r in radios] == ["yes", "no", "na"]
    assert labels == [r["id"] for r in radios] and {r["name"] for r in radios} == {"answer-silt_fence-a1"}
    assert [("checked" in r) for r in radios] == [False, True, False]
    assert all(r["form"] == "report-form" for r in radios)


def test_a_text_field_keeps_what_was_typed_and_its_hint_and_error_are_its_description():
    typed = 'Rills "2 in" deep <east>'
    html = report_text("fix-a1-repair", "Repair needed", typed, {"fix-a1-repair": "Too long"}, rows=2,
                       hint="What must be done")
    page = _Elements(html)
    area = next(attrs for tag, attrs in page.tags if tag == "textarea")
    assert page.text["fix-a1-repair"] == typed
    assert set(area["aria-describedby"].split()) == {"fix-a1-repair-hint", "fix-a1-repair-error"} <= page.ids()
    assert next(attrs for tag, attrs in page.tags if tag == "label")["for"] == "fix-a1-repair"

    line = _Elements(report_text("gauge_precip_in", "Gauge", 0.5, {}, attrs='inputmode="decimal"'))
    field = next(attrs for tag, attrs in line.tags if tag == "input")
    assert field["value"] == "0.5" and field["inputmode"] == "decimal" and "aria-describedby" not in field


def test_a_note_with_text_or_an_error_stays_shown():
    assert re.search(r'class="answer-note"', str(report_answer_note("note-a", "Note", None, {})))
    assert "answer-note-kept" in report_answer_note("note-a", "Note", "Fence down", {})
    assert "answer-note-kept" in report_answer_note("note-a", "Note", "", {"note-a": "Say what was seen"})


def test_a_photo_input_keeps_the_photos_a_refused_form_had_uploaded(app):
    uploaded = ["a" * 64, "b" * 64]
    with app.test_request_context(method="POST", data={"answer-fence-a1-photos_sha256": uploaded}):
        html = report_photo_input("answer-fence-a1-photos", "Photo", "Silt fence: East line", compact=True)
        fresh = _Elements(report_photo_input("photos", "Photos of the site"))
    page = _Elements(html)
    file_input = next(attrs for tag, attrs in page.tags if tag == "input" and attrs["type"] == "file")
    kept = [attrs["value"] for tag, attrs in page.tags if tag == "input" and attrs["type"] == "hidden"]
    assert next(attrs for tag, attrs in page.tags if tag == "label")["for"] == file_input["id"]
    assert file_input["form"] == "report-form" and "multiple" in file_input and file_input["class"] == "visually-hidden"
    assert kept == uploaded and "2 photo(s) already uploaded are kept." in html
    assert not [attrs for tag, attrs in fresh.tags if tag == "input" and attrs["type"] == "hidden"]


def test_a_fix_typed_or_refused_stays_open_with_its_action_and_kind_chosen(app):
    """A condition's fix (`report_fix`): folded away while empty; once something is typed or refused it stays open
    (`fix-kept`), keeps what was typed, selects the action and kind chosen, and names each error it shows."""
    condition = SimpleNamespace(text="Control <not> working", citation="Town rule 9 (a)")
    actions = [SimpleNamespace(id="act-1", description="Re-stake the east fence & trench",
                               due_at=dt.datetime(2026, 6, 1, 15, 0, tzinfo=dt.UTC)),
               SimpleNamespace(id="act-2", description="Seed the slope",
                               due_at=dt.datetime(2026, 6, 8, 15, 0, tzinfo=dt.UTC))]
    with app.test_request_context():
        empty = _Elements(report_fix("fix-fence-a1", {}, condition, {}, actions))
        fix = {"repair": 'Fence "down" <east>', "first_observed": "2026-05-30", "action_id": "act-2",
               "kind": "significant_repair", "owner_name": "Site contractor"}
        errors = {"fix-fence-a1-owner_name": "Say who does it", "fix-fence-a1-action": "Not an open action"}
        kept = _Elements(report_fix("fix-fence-a1", fix, condition, errors, actions))
        refused = _Elements(report_fix("fix-fence-a1", {}, condition, {"fix-fence-a1-repair": "Say what"}, actions))

    details = next(attrs for tag, attrs in empty.tags if tag == "details")
    assert details["class"] == "fix" and "open" not in details
    assert "Control <not> working, Town rule 9 (a)" in empty.text["fix-fence-a1"]
    details = next(attrs for tag, attrs in kept.tags if tag == "details")
    assert details["class"] == "fix fix-kept" and "open" in details
    assert "open" in next(attrs for tag, attrs in refused.tags if tag == "details")
    assert kept.text["fix-fence-a1-repair"] == fix["repair"]
    inputs = {attrs["id"]: attrs for tag, attrs in kept.tags if tag in ("input", "select", "textarea")}
    assert inputs["fix-fence-a1-first_observed"]["value"] == "2026-05-30"
    assert inputs["fix-fence-a1-owner_name"]["value"] == "Site contractor"
    assert inputs["fix-fence-a1-owner_name"]["aria-describedby"] == "fix-fence-a1-owner_name-error"
    assert all(attrs["form"] == "report-form" for attrs in inputs.values())
    options = [attrs for tag, attrs in kept.tags if tag == "option"]
    assert [o["value"] for o in options if "selected" in o] == ["act-2", "significant_repair"]
    assert kept.text["fix-fence-a1-action-error"] == "Error: Not an open action"
    assert "Re-stake the east fence & trench (due Jun 1, 2026 11:00 AM)" in kept.text["fix-fence-a1-action"]
