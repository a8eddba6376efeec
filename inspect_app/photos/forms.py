"""Forms for adding a photo and changing its caption."""
from __future__ import annotations

from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import HiddenField, StringField
from wtforms.validators import Length, Optional, Regexp

CAPTION_MAX = 2000


class PhotoUploadForm(FlaskForm):
    photo = FileField("Photo", validators=[FileRequired("Choose a photo, or take one with the camera.")])
    caption = StringField("Caption", validators=[Optional(), Length(max=CAPTION_MAX)],
                          description="What the photo shows and where, e.g. “Silt fence at the NE corner”")
    # Devices make photo ids offline; sending the same id again gives the same photo.
    photo_id = HiddenField(validators=[Optional(), Regexp(r"^[0-9a-fA-F-]{32,36}$",
                                                          message="The photo id is not a UUID.")])


class CaptionForm(FlaskForm):
    caption = StringField("Caption", validators=[Optional(), Length(max=CAPTION_MAX)])
