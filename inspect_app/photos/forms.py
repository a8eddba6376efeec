"""Forms for adding a photo and changing its caption."""
from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import HiddenField, StringField, ValidationError
from wtforms.validators import Length, Optional, Regexp

from inspect_app.photos.captions import CAPTION_MAX
from inspect_app.photos.markup import LABEL_MAX_CHARS, MarkupRefused, parse_markup


class PhotoUploadForm(FlaskForm):
    photo = FileField("Photo", validators=[FileRequired("Choose a photo, or take one with the camera.")])
    caption = StringField("Caption", validators=[Optional(), Length(max=CAPTION_MAX)],
                          description="What the photo shows and where, e.g. “Silt fence at the NE corner”")
    # Devices make photo ids offline; sending the same id again gives the same photo.
    photo_id = HiddenField(validators=[Optional(), Regexp(r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$",
                                                          message="The photo id is not a UUID.")])


class CaptionForm(FlaskForm):
    caption = StringField("Caption", validators=[Optional(), Length(max=CAPTION_MAX)])


class MarkupForm(FlaskForm):
    """The shapes drawn on a photo (JSON, photos/markup.py), checked on the server alone."""

    markup = HiddenField()
    # What the next label will say: read by the page's script, never stored from this field.
    label_text = StringField("Label text", validators=[Optional()], render_kw={"maxlength": LABEL_MAX_CHARS},
                             description=f"Up to {LABEL_MAX_CHARS} characters. Choose Label, then tap the photo.")

    def validate_markup(self, field) -> None:
        try:
            self.shapes = parse_markup(field.data)
        except MarkupRefused as refusal:
            raise ValidationError(str(refusal)) from None
