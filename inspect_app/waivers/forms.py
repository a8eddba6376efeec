"""The form to record a waiver the authority granted."""
from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import SelectField, TextAreaField
from wtforms.validators import DataRequired, InputRequired, Length, Optional

from inspect_app.fields import DateField


class WaiverForm(FlaskForm):
    requirement = SelectField("Requirement waived", validators=[DataRequired(message="Choose the requirement.")])
    structure_id = SelectField("Structure (pre-bury inspection only)", validators=[Optional()])
    reason = TextAreaField("Reason", validators=[Optional(), Length(max=5000)],
                           description="Why strict compliance does not further the purposes of the rules.")
    granted_on = DateField("Granted on", validators=[InputRequired(message="Give the day it was granted.")])
