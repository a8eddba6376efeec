"""Forms for signing in."""
from flask_wtf import FlaskForm
from wtforms import BooleanField, EmailField, PasswordField
from wtforms.validators import DataRequired, Length


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254)],
                       render_kw={"autocomplete": "username", "autocapitalize": "none"})
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)],
                             render_kw={"autocomplete": "current-password"})
    # Off unless ticked: a sign-in otherwise ends with the browser, or after SESSION_IDLE_TIMEOUT idle.
    remember = BooleanField("Keep me signed in on this device",
                            description="Only on a device that you alone use.")
