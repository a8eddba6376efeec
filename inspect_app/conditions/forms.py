"""Forms to record frozen conditions and a snowmelt discharge seen on site."""
from __future__ import annotations

from flask_wtf import FlaskForm
from wtforms import RadioField, SelectChoice, TextAreaField
from wtforms.validators import InputRequired, Length, Optional

from inspect_app.fields import DateTimeLocalField, FloatField

FROZEN_CHOICES = [
    SelectChoice("suspended", "Construction suspended, ground frozen, every disturbed area stabilized: "
                              "inspections suspended"),
    SelectChoice("reduced", "Work goes on in frozen conditions: inspections once a month"),
]


class FrozenForm(FlaskForm):
    kind = RadioField("What the site does", choices=FROZEN_CHOICES,
                      validators=[InputRequired(message="Choose what the site does while frozen.")])
    starts_at = DateTimeLocalField("Frozen since", format="%Y-%m-%dT%H:%M",
                                   validators=[InputRequired(message="Give the date and time.")])
    note = TextAreaField("Why runoff is unlikely", validators=[Optional(), Length(max=2000)],
                         description="Frozen conditions likely to continue for months, based on historic seasonal "
                                     "averages.")


class FrozenEndForm(FlaskForm):
    ends_at = DateTimeLocalField("Frozen conditions ended", format="%Y-%m-%dT%H:%M",
                                 validators=[InputRequired(message="Give the date and time.")])


class SnowmeltForm(FlaskForm):
    discharge_at = DateTimeLocalField("Snowmelt discharge seen on", format="%Y-%m-%dT%H:%M",
                                      validators=[InputRequired(message="Give the date and time.")])
    snow_in = FloatField("Snow of the storm it melted from (inches within 24 hours)",
                         validators=[InputRequired(message="Give the snow in inches.")])
    note = TextAreaField("Where and what was seen", validators=[Optional(), Length(max=2000)])
