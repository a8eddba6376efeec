"""The findings and punch-list parts of a report page: what they show to the current user, and the forms.

Both the report page (inspections) and the in-page edits (findings) assemble them here, so neither view
module imports the other's.
"""
from __future__ import annotations

from flask_login import current_user

from inspect_app import inspection_types
from inspect_app.accounts.policy import allowed
from inspect_app.findings import forms
from inspect_app.inspections.models import Inspection
from inspect_app.inspections.queries import may_edit, punch_items_of


def page_context(inspection: Inspection, **overrides) -> dict:
    """What the findings and punch-list parts of a report page show to the current user."""
    permit, draft = inspection.permit, not inspection.is_submitted
    editable = draft and may_edit(current_user, inspection)
    picked = overrides.pop("forms_for", {})
    return {
        "findings": list(inspection.findings), "findings_editable": editable,
        "action_form": lambda f: picked.get(f"action-{f.id}") or forms.action_form(permit, f.id, formdata=None),
        "close_form": lambda a: picked.get(f"close-{a.id}")
        or forms.CloseOutForm(prefix=f"close-{a.id}", formdata=None),
        "return_form": lambda f: picked.get(f"return-{f.id}")
        or forms.ReturnForm(prefix=f"return-{f.id}", formdata=None),
        "may_open_action": (editable or not draft) and allowed(current_user, "inspection.perform", permit),
        "may_close": not draft and allowed(current_user, "action.close", permit),
        "may_review": not draft and allowed(current_user, "finding.review", permit),
        "punch_items": punch_items_of(inspection) if inspection_types.spec(inspection.type).makes_punch_list else [],
    } | overrides
