"""Forms for permits, their inspectors, disturbed areas and stormwater structures."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

from flask import current_app
from flask_wtf import FlaskForm
from wtforms import SelectChoice
from wtforms import BooleanField, EmailField, RadioField, SelectField, StringField, TextAreaField, TimeField
from wtforms.validators import (
    DataRequired, InputRequired, Length, NumberRange, Optional, Regexp, ValidationError,
)

from inspect_app.fields import (DateField, DateTimeLocalField, DecimalField, Email, FloatField, IntegerField,
                                 MoneyField, check_local_moment)
from inspect_app.geo import LATITUDE_RANGE, LONGITUDE_RANGE
from inspect_app.extensions import db
from inspect_app.permits.models import STRUCTURE_KINDS, Jurisdiction
from inspect_app.stabilization.models import AREA_STATUSES
from inspect_app.templating import humanize

CGP_CHOICES = [
    SelectChoice("every_7_days", "Every 7 calendar days"),
    SelectChoice("every_14_days_and_storm", "Every 14 days and within 24 h of a storm (of the town's threshold)"),
]


class PermitForm(FlaskForm):
    jurisdiction_id = SelectField("Town", validators=[DataRequired()])
    # One line: it heads every mail about the permit, and a line break in a mail's subject refuses the mail.
    number = StringField("Permit number", validators=[DataRequired(), Length(max=40), Regexp(
        r"^[^\x00-\x1f\x7f]*\Z", message="A permit number is one line of text, with no line breaks or tabs.")])
    site_address = StringField("Site address", validators=[DataRequired(), Length(max=300)])
    parcel_id = StringField("Parcel ID", validators=[Optional(), Length(max=60)],
                            description="The assessor's map and lot, e.g. 12-34-5")
    latitude = FloatField("Latitude", validators=[InputRequired(message="Latitude is required."),
                                                  NumberRange(-90, 90)],
                          description="Decimal degrees, e.g. 42.0501")
    longitude = FloatField("Longitude", validators=[InputRequired(message="Longitude is required."),
                                                    NumberRange(-180, 180)],
                           description="Decimal degrees, west is negative, e.g. -72.5828")
    owner_id = SelectField("Owner's account (permittee)", validators=[Optional()])
    owner_name = StringField("Owner", validators=[DataRequired(), Length(max=200)],
                             description="The owner of record of the site.")
    applicant_name = StringField("Applicant", validators=[DataRequired(), Length(max=200)])
    applicant_email = EmailField("Applicant's email", validators=[Optional(), Email(), Length(max=254)],
                                 description="Reports are sent here after each inspection.")
    disturbed_acres = DecimalField("Disturbed area (acres)", places=3,
                                   validators=[InputRequired(message="Disturbed area is required."),
                                               NumberRange(0, 100000)])
    is_redevelopment = RadioField("Project", choices=[SelectChoice("0", "New development"), SelectChoice("1", "Redevelopment")],
                                  default="0", validators=[DataRequired()])
    sensitive_waters = BooleanField("Discharges to sensitive waters (impaired for sediment or "
                                    "nutrients, Tier 2/2.5/3, or ORW)")
    sensitive_waters_note = StringField("Which water and why", validators=[Optional(), Length(max=300)])
    cgp_schedule = RadioField("CGP inspection schedule", choices=CGP_CHOICES, default="every_7_days",
                              validators=[DataRequired()])
    npdes_id = StringField("NPDES ID", validators=[Optional(), Length(max=40)],
                           description="The permit's ID under EPA's Construction General Permit (its notice of "
                                       "intent), printed on erosion-control reports.")
    # Up to what its column holds (12 digits, 2 of them cents): a larger one was stored on SQLite and refused by
    # PostgreSQL at the commit, a 500.
    surety_amount = MoneyField("Surety (USD)", places=2, validators=[Optional(), NumberRange(
        0, Decimal("9999999999.99"), message="The surety must be between $0 and $9,999,999,999.99.")])
    issued_on = DateField("Issued on", validators=[InputRequired(message="Issue date is required.")])
    construction_started_on = DateField("Construction started on", validators=[Optional()])
    construction_started_time = TimeField("Construction started at (time)", validators=[Optional()],
                                          description="§380-2: the first land-disturbing activity. Without a time, "
                                                      "the whole day counts as before construction.")
    extension_requested_on = DateField("Extension applied for on", validators=[Optional()],
                                       description="Only where permits lapse unless work begins (Southborough "
                                                   "§9.7): the day the written application was received.")
    extension_granted_on = DateField("Extension granted on", validators=[Optional()],
                                     description="Where permits lapse (Southborough §9.7), the permit then lapses a "
                                                 "year later than it would have; where work must begin within a time "
                                                 "(Longmeadow §380-10 K), give the new deadline too.")
    start_extended_to = DateField("Start deadline extended to", validators=[Optional()],
                                  description="Where work must begin within a time (Longmeadow §380-10 K): the "
                                              "new deadline the extension sets.")
    decision_filed_on = DateField("Decision filed with the Town Clerk on", validators=[Optional()],
                                  description="Where permits lapse (Southborough §9.7): the lapse is counted "
                                              "from this day.")

    def validate_construction_started_on(self, field) -> None:
        if field.data and self.issued_on.data and field.data < self.issued_on.data:
            raise ValidationError("Construction cannot start before the permit is issued.")

    def validate_construction_started_time(self, field) -> None:
        if field.data and not self.construction_started_on.data:
            raise ValidationError("Give the day construction started first.")
        if field.data:
            try:  # the hour the clocks skip in March names no moment (fields.check_local_moment)
                check_local_moment(dt.datetime.combine(self.construction_started_on.data, field.data))
            except ValueError as error:
                raise ValidationError(str(error)) from None

    def validate_extension_requested_on(self, field) -> None:
        if field.data and self.issued_on.data and field.data < self.issued_on.data:
            raise ValidationError("An extension cannot be applied for before the permit is issued.")

    def validate_start_extended_to(self, field) -> None:
        if field.data and not self.extension_granted_on.data:
            raise ValidationError("Give the day the extension was granted first.")

    def validate_decision_filed_on(self, field) -> None:
        if field.data and self.issued_on.data and field.data < self.issued_on.data:
            raise ValidationError("The decision cannot be filed before it was issued.")

    def validate_extension_granted_on(self, field) -> None:
        # An application is asked for where the town's text says one is made (Southborough §9.7: "by applying to
        # the Commission, in writing"); Longmeadow's DPW Director grants one "at its discretion" (§380-10 K).
        if field.data and not self.extension_requested_on.data and self._applied_for():
            raise ValidationError("Give the day the extension was applied for first.")
        if field.data and self.extension_requested_on.data and field.data < self.extension_requested_on.data:
            raise ValidationError("An extension cannot be granted before it was applied for.")

    def _applied_for(self) -> bool:
        """Whether the chosen town's extension is applied for (its permits lapse unless work begins); an unknown
        town's is."""
        town = db.session.get(Jurisdiction, self.jurisdiction_id.data) if self.jurisdiction_id.data else None
        profile = current_app.extensions["profiles"].get(town.profile_key) if town else None
        return profile is None or profile.permit_clock is None or profile.permit_clock.kind == "lapse_after"

    def validate(self, extra_validators=None) -> bool:
        valid = super().validate(extra_validators)
        # Checked across two fields, shown beside the note (CGP 2022 Part 4.3 needs the reason).
        if self.sensitive_waters.data and not (self.sensitive_waters_note.data or "").strip():
            self.sensitive_waters_note.errors = [*self.sensitive_waters_note.errors,
                                                 "Say which water makes the site sensitive."]
            valid = False
        return valid


class StatusForm(FlaskForm):
    status = SelectField("New status", validators=[DataRequired()])


class AssignmentForm(FlaskForm):
    user_id = SelectField("Inspector", validators=[DataRequired(message="Choose an inspector.")])
    capacity = SelectField("As", choices=[SelectChoice("design_engineer", "Project design engineer"),
                                          SelectChoice("erosion_control_inspector", "Erosion-control inspector")],
                           validators=[DataRequired()])


class AreaForm(FlaskForm):
    name = StringField("Area name", validators=[DataRequired(), Length(max=120)])
    acres = DecimalField("Acres", places=3, validators=[InputRequired(message="Acres are required."),
                                                        NumberRange(0.001, 100000)])


class AreaStatusForm(FlaskForm):
    status = SelectField("Status", choices=[SelectChoice(s, humanize(s)) for s in AREA_STATUSES],
                         validators=[DataRequired()])
    at = DateTimeLocalField("Since", format="%Y-%m-%dT%H:%M",
                            validators=[InputRequired(message="Give the date and time.")])
    note = TextAreaField("Note", validators=[Optional(), Length(max=2000)])


class BackfillForm(FlaskForm):
    at = DateTimeLocalField("Backfilled on", format="%Y-%m-%dT%H:%M",
                            validators=[InputRequired(message="Give the date and time it was backfilled.")])


class StructureForm(FlaskForm):
    name = StringField("Name", validators=[DataRequired(), Length(max=120)],
                       description="As on the plan, e.g. “Infiltration system IS-1”")
    kind = SelectField("Kind", choices=[SelectChoice(k, humanize(k)) for k in STRUCTURE_KINDS],
                       validators=[DataRequired()])
    is_underground = BooleanField("Underground (needs a pre-bury inspection before backfill)",
                                  default=True)
    design_size = StringField("Design size", validators=[Optional(), Length(max=120)])
    design_invert = StringField("Design invert", validators=[Optional(), Length(max=120)])
    material = StringField("Material", validators=[Optional(), Length(max=120)])
    groundwater_separation_ft = DecimalField("Separation to groundwater (ft)", places=2,
                                             validators=[Optional(), NumberRange(0, 1000)])
    maintenance_task = TextAreaField("O&M task", validators=[Optional(), Length(max=2000)])
    maintenance_interval_months = IntegerField("O&M every (months)",
                                             validators=[Optional(), NumberRange(1, 120)])


class PointForm(FlaskForm):
    """A point on the site map for one of the permit's disturbed areas, structures or easements (`subject` is
    "area:<id>", "structure:<id>" or "easement:<id>"; the view gives the choices the user may place)."""

    subject = SelectField("Area, structure or easement", validate_choice=False,
                          validators=[DataRequired(message="Choose the area, structure or easement to place.")])
    latitude = FloatField("Latitude", validators=[
        InputRequired(message="Tap the map or use this device's location to give a latitude."),
        NumberRange(*LATITUDE_RANGE, message="A latitude is between -90 and 90 degrees.")])
    longitude = FloatField("Longitude", validators=[
        InputRequired(message="Tap the map or use this device's location to give a longitude."),
        NumberRange(*LONGITUDE_RANGE, message="A longitude is between -180 and 180 degrees (west is negative).")])

    def validate_subject(self, field) -> None:
        if field.data not in {choice.value for choice in field.choices}:
            raise ValidationError("Choose an area, structure or easement of this permit.")
