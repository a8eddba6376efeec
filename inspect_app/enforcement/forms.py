"""Forms to issue, acknowledge and lift a stop-work order."""
from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import BooleanField, SelectField, SelectMultipleField, TextAreaField
from wtforms.validators import DataRequired, Length, Optional, ValidationError
from wtforms.widgets import CheckboxInput, ListWidget


class CheckboxesField(SelectMultipleField):
    """Several choices, shown as a list of checkboxes."""

    widget = ListWidget(prefix_label=False)
    option_widget = CheckboxInput()


class IssueStopWorkForm(FlaskForm):
    reason = TextAreaField("Reasons for the order", validators=[
        DataRequired(message="Give the reasons for the stop-work order."), Length(max=5000)],
        description="What was found and why work must stop.")
    finding_ids = CheckboxesField("Open findings this order cites", validators=[Optional()],
                                  description="The order stands until each of these is corrected.")
    inspection_id = SelectField("Inspection that found the violations", validators=[Optional()])
    with_notice = BooleanField("Also issue a written notice of violation")
    notice_text = TextAreaField("Notice of violation", validators=[Optional(), Length(max=5000)],
                                description="The violation and the corrective actions required.")

    def validate_notice_text(self, field) -> None:
        if self.with_notice.data and not (field.data or "").strip():
            raise ValidationError("Write the notice of violation, or untick it.")


class AcknowledgeForm(FlaskForm):
    """Only the CSRF token: the permittee confirms receipt."""


class LiftStopWorkForm(FlaskForm):
    reason = TextAreaField("Why the order is lifted", validators=[
        DataRequired(message="Say why the order is lifted."), Length(max=5000)])
    # §380-16 C(4)(e)[5]: the work "has received approval by the DPW Director"; the view names the town's
    # authority in the label. Lifting is that approval, given by the person who lifts the order.
    approves_work = BooleanField("I approve all work previously completed on this permit", validators=[
        DataRequired(message="Approve the work previously completed, or leave the order standing.")])
    # Its hint is services.LIFT_INSPECTION_NOTE (the view sets it): optional, never instead of the corrections.
    approval_inspection_id = SelectField("Inspection the approval rests on (optional)", validators=[Optional()])
