"""Forms for findings, corrective actions, their close-out and review, and punch-list items."""
from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField
from wtforms import BooleanField, SelectChoice, SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, InputRequired, Length, Optional

from inspect_app.fields import DateTimeLocalField, label_choices
from inspect_app.inspections.models import CITATION_LENGTH
from inspect_app.permits.models import Permit

class FindingForm(FlaskForm):
    description = TextAreaField("What was found", validators=[DataRequired(message="Describe what was found."),
                                                              Length(max=5000)])
    location = StringField("Where", validators=[Optional(), Length(max=300)])
    severity = SelectField("Severity", choices=label_choices("severity"),
                           default="minor", validators=[DataRequired()])
    is_violation = BooleanField("This is a violation of the permit or the approved plan")
    citation = StringField("Citation", validators=[Optional(), Length(max=CITATION_LENGTH)],
                           description="The rule it breaks: its section in the town's regulation or the CGP")
    area_id = SelectField("Disturbed area", validators=[Optional()])
    structure_id = SelectField("Structure", validators=[Optional()])


def finding_form(permit: Permit, prefix: str = "finding", **kwargs) -> FindingForm:
    """The finding form with the permit's areas and structures to choose from."""
    form = FindingForm(prefix=prefix, **kwargs)
    form.area_id.choices = [SelectChoice("", "— none —")] + [SelectChoice(a.id, a.name) for a in permit.areas]
    structures = [SelectChoice(s.id, s.name) for s in permit.structures]
    form.structure_id.choices = [SelectChoice("", "— none —")] + structures
    return form


class ActionForm(FlaskForm):
    kind = SelectField("Kind", choices=label_choices("action_kind"), validators=[DataRequired()],
                       description="CGP 2022 Part 5.2 sets the deadline from the kind.")
    description = TextAreaField("What must be done", validators=[DataRequired(message="Say what must be done."),
                                                                 Length(max=5000)])
    owner_id = SelectField("Who does it", validators=[Optional()])
    owner_name = StringField("…or name", validators=[Optional(), Length(max=200)],
                             description="A contractor or person without an account")


def action_form(permit: Permit, finding_id: str, **kwargs) -> ActionForm:
    """The corrective-action form for one finding, with the permit's people to choose from."""
    form = ActionForm(prefix=f"action-{finding_id}", **kwargs)
    people = [a.user for a in permit.assignments] + ([permit.owner] if permit.owner else [])
    unique = {p.id: p for p in people}.values()
    form.owner_id.choices = [SelectChoice("", "— type a name —")] + [SelectChoice(p.id, p.name) for p in unique]
    return form


class CloseOutForm(FlaskForm):
    completed_at = DateTimeLocalField("Done on", format="%Y-%m-%dT%H:%M",
                                      validators=[InputRequired(message="Give the date and time it was done.")])
    note = TextAreaField("What was done", validators=[Optional(), Length(max=5000)])
    # CGP 2022 Part 5.4: a photo of the corrected work documents the corrective action.
    evidence_photo = FileField("Evidence photo", description="Take a photo of the corrected work, or choose one "
                                                             "(optional). Kept on this device if offline.")
    evidence_photo_id = StringField("…or a photo already uploaded", validators=[Optional(), Length(max=36)],
                                    description="Its photo id (optional)")


class ReturnForm(FlaskForm):
    comment = TextAreaField("What must still be done", validators=[DataRequired(message="Say what must still be done."),
                                                                   Length(max=5000)])


class PunchForm(FlaskForm):
    description = StringField("Remaining work and where", validators=[
        DataRequired(message="Describe the remaining work and where it is."), Length(max=2000)])
