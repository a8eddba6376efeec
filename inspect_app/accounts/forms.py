"""Forms for signing in and changing one's password."""
from flask_wtf import FlaskForm
from wtforms import BooleanField, EmailField, PasswordField
from wtforms.validators import DataRequired, EqualTo, Length

from inspect_app.accounts.services import PASSWORD_MIN_LENGTH

MIN_WORDS = f"At least {PASSWORD_MIN_LENGTH} characters."


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254)],
                       render_kw={"autocomplete": "username", "autocapitalize": "none"})
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)],
                             render_kw={"autocomplete": "current-password"})
    # Off unless ticked: a sign-in otherwise ends with the browser, or after SESSION_IDLE_TIMEOUT idle.
    remember = BooleanField("Keep me signed in on this device",
                            description="Only on a device that you alone use.")


class PasswordForm(FlaskForm):
    current_password = PasswordField("Current password", validators=[DataRequired(), Length(max=200)],
                                     render_kw={"autocomplete": "current-password"})
    new_password = PasswordField("New password", validators=[DataRequired(), Length(max=200)],
                                 description=MIN_WORDS, render_kw={"autocomplete": "new-password"})
    confirm = PasswordField("New password again", validators=[
        DataRequired(), EqualTo("new_password", message="The two new passwords are not the same.")],
        render_kw={"autocomplete": "new-password"})


class SetPasswordForm(FlaskForm):
    password = PasswordField("New password", validators=[DataRequired(), Length(min=PASSWORD_MIN_LENGTH, max=200)],
                             render_kw={"autocomplete": "new-password"}, description=MIN_WORDS)
    confirm = PasswordField("The same again", validators=[DataRequired(), EqualTo("password",
                                                          message="The two passwords differ.")],
                            render_kw={"autocomplete": "new-password"})
