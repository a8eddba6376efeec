"""Label sets: the words a form offers are the words a page and a PDF show, for every value the database allows."""
from __future__ import annotations

import pytest

from inspect_app import labels
from inspect_app.certifications.forms import LogEntryForm, PartyForm
from inspect_app.certifications.models import MaintenanceLogEntry, ResponsibleParty
from inspect_app.findings.forms import ActionForm, FindingForm
from inspect_app.inspections.models import CorrectiveAction, Finding


@pytest.mark.parametrize("form, field, column, of", [
    (FindingForm, "severity", Finding.severity, "severity"),
    (ActionForm, "kind", CorrectiveAction.kind, "action_kind"),
    (LogEntryForm, "kind", MaintenanceLogEntry.kind, "log_kind"),
    (PartyForm, "role", ResponsibleParty.role, "party_role"),
])
def test_a_form_offers_every_stored_value_in_the_words_pages_and_pdfs_use(app, form, field, column, of):
    with app.test_request_context():
        offered = {c.value: c.label for c in getattr(form(), field).choices}
    assert list(offered) == list(column.type.enums)
    assert offered == {value: labels.label(value, of) for value in column.type.enums}


def test_a_value_without_words_is_shown_as_it_is_and_none_as_a_dash():
    assert labels.label("unheard_of", "severity") == "unheard_of"
    assert labels.label(None, "answer") == "—"
