"""Forms of the O&M phase: the plan, responsible parties, log entries, certification, review, notices."""
from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import (
    BooleanField, EmailField, HiddenField, RadioField, SelectChoice, SelectField, StringField, TextAreaField,
)
from wtforms.validators import DataRequired, Email, InputRequired, Length, NumberRange, Optional

from inspect_app.fields import DateField, DecimalField, IntegerField, label_choices

class LogEntryForm(FlaskForm):
    kind = RadioField("What was done", choices=label_choices("log_kind"),
                      validators=[InputRequired(message="Choose what was done.")])
    performed_on = DateField("Date", validators=[InputRequired(message="Give the date the work was done.")])
    structure_id = SelectField("Structure", validators=[Optional()],
                               description="The structure from the O&M plan, if the work was on one.")
    description = TextAreaField("What was done", validators=[DataRequired(message="Say what was done."),
                                                            Length(max=4000)])
    material_type = StringField("Type of material", validators=[Optional(), Length(max=200)],
                                description="For a disposal: e.g. sediment from the forebay.")
    disposal_location = StringField("Disposal location", validators=[Optional(), Length(max=300)],
                                    description="For a disposal: where the material went.")
    performed_by = StringField("Performed by", validators=[DataRequired(message="Say who did the work."),
                                                           Length(max=200)])


class CertifyForm(FlaskForm):
    # No name field: the signer is whoever is signed in, by their account's name (SPEC *Signatures*).
    agree = BooleanField("I make the certification above",
                         validators=[DataRequired(message="Tick the box to make the certification.")])
    signature = HiddenField("Drawn signature (optional)")
    # Asked only when the period has no log entry (services.NO_ENTRIES); the server checks it.
    without_entries = BooleanField("I certify this period although its maintenance log has no entries")


class ReviewForm(FlaskForm):
    decision = RadioField("Decision", choices=[SelectChoice("accepted", "Accept"),
                                               SelectChoice("deficient", "Deficient: send a notice to correct")],
                          validators=[InputRequired(message="Choose accept or deficient.")])
    note = TextAreaField("Maintenance to correct", validators=[Optional(), Length(max=4000)],
                         description="Required when deficient; it is the text of the notice to correct.")


class NoticeForm(FlaskForm):
    text = TextAreaField("Maintenance to correct",
                         validators=[DataRequired(message="Say what maintenance must be corrected."),
                                     Length(max=4000)])
    # The inspection whose violations the notice follows and cites (§380-14 E), when issued from its report.
    inspection_id = HiddenField(validators=[Optional(), Length(max=36)])


class PlanForm(FlaskForm):
    estimated_annual_budget = DecimalField("Estimated annual O&M budget (USD)", places=2,
                                           validators=[Optional(), NumberRange(0, 100_000_000)])
    registry_reference = StringField("Registry of deeds reference (book and page)",
                                     validators=[Optional(), Length(max=120)])
    recorded_on = DateField("Recorded on", validators=[Optional()])


class EasementForm(FlaskForm):
    """One stormwater management easement: its purpose and location, grantor and registry recording."""

    purpose = TextAreaField("Purpose", validators=[Optional(), Length(max=2000)],
                            description="e.g. access for inspection and maintenance of Basin B-1; "
                                        "preservation of the flood route; heavy-equipment access for cleanout.")
    location = StringField("Location", validators=[Optional(), Length(max=300)],
                           description="Where it runs: lot, parcel, strip or plan sheet.")
    grantor_id = SelectField("Grantor", validators=[Optional()],
                             description="An easement grantor recorded among the responsible parties.")
    registry_reference = StringField("Registry of deeds reference (book and page)",
                                     validators=[Optional(), Length(max=120)])
    recorded_on = DateField("Recorded on", validators=[Optional()])


class PartyForm(FlaskForm):
    role = SelectField("Responsibility", choices=label_choices("party_role"),
                       validators=[DataRequired()])
    name = StringField("Name", validators=[DataRequired(message="Give the responsible party's name."),
                                           Length(max=200)])
    email = EmailField("Email", validators=[Optional(), Email(), Length(max=254)],
                       description="Notices and reminders go here.")
    address = StringField("Address", validators=[Optional(), Length(max=300)])
    starts_on = DateField("Responsible from", validators=[InputRequired(message="Give the date.")])
    user_id = SelectField("Their account (permittee)", validators=[Optional()])
    replaces_current = BooleanField("Replaces the current party with this responsibility", default=True)
    make_permit_owner = BooleanField("Make this account the permit's owner (new owner only)")


class SignAmendmentForm(FlaskForm):
    """§380-14 F(2): one responsible party's signature of a schedule amendment."""
    party_id = HiddenField(validators=[DataRequired()])


class ScheduleForm(FlaskForm):
    maintenance_task = TextAreaField("Task", validators=[Optional(), Length(max=2000)])
    maintenance_interval_months = IntegerField("Every (months)", validators=[Optional(), NumberRange(1, 120)])
