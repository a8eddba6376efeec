"""Forms for the final submissions, their review, the certificate of completion and surety releases."""
from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import BooleanField, RadioField, SelectChoice, SelectField, StringField, TextAreaField
from wtforms.validators import DataRequired, InputRequired, Length, NumberRange, Optional, ValidationError

from inspect_app.fields import DecimalField


class OMPlanForm(FlaskForm):
    pdf = FileField("Final O&M plan (PDF)", validators=[FileRequired("Choose the PDF file to upload.")])
    registry_reference = StringField("Recording at the registry of deeds", validators=[
        DataRequired(message="Give the book and page, or document number, of the recording."),
        Length(max=120)])


PE_STAMP = "The drawings bear the stamp of a Massachusetts registered professional engineer"


class AsBuiltForm(FlaskForm):
    pdf = FileField("As-built drawings (PDF)", validators=[FileRequired("Choose the PDF file to upload.")])
    # Its label is completed with the town's own clause (`views._submit_form`).
    pe_certified = BooleanField(PE_STAMP, validators=[
        DataRequired(message="As-built drawings must be certified by a registered professional engineer.")])


class FinalReportForm(FlaskForm):
    inspection_id = SelectField("Final inspection report", validators=[
        DataRequired(message="Choose the submitted final inspection.")])


class ReviewForm(FlaskForm):
    decision = RadioField("Decision", choices=[SelectChoice("accepted", "Accept"),
                                               SelectChoice("rejected", "Reject")],
                          validators=[DataRequired(message="Choose accept or reject.")])
    note = TextAreaField("Note", validators=[Optional(), Length(max=5000)],
                         description="Required when rejecting: what must be corrected.")

    def validate_note(self, field) -> None:
        if self.decision.data == "rejected" and not (field.data or "").strip():
            raise ValidationError("Say why the submission is rejected, so it can be corrected.")


class CertificateForm(FlaskForm):
    note = TextAreaField("Note on the certificate", validators=[Optional(), Length(max=5000)])

    def waivers(self, formdata) -> dict[str, str]:
        """The required inspections ticked as waived (`<prefix>-waive`, each its key), with the reason typed for
        each (`<prefix>-waive-<key>-reason`, at most 2,000 characters)."""
        prefix = f"{self._prefix}waive"
        return {key: (formdata.get(f"{prefix}-{key}-reason") or "")[:2000] for key in formdata.getlist(prefix)}


class SuretyReleaseForm(FlaskForm):
    phase = StringField("Phase", validators=[DataRequired(message="Name the phase this release is for."),
                                             Length(max=120)])
    amount = DecimalField("Amount released (USD)", places=2, validators=[
        InputRequired(message="Give the amount released."), NumberRange(min=0.01, message="The amount must "
                                                                                         "be more than zero.")])
    is_final = BooleanField("Final release of the whole remaining surety (only after the certificate of "
                            "completion)")
