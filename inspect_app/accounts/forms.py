"""Forms for signing in."""
from flask_wtf import FlaskForm
from wtforms import EmailField, PasswordField
from wtforms.validators import DataRequired, EqualTo, Length


class LoginForm(FlaskForm):
    email = EmailField("Email", validators=[DataRequired(), Length(max=254)],
                       render_kw={"autocomplete": "username", "autocapitalize": "none"})
    password = PasswordField("Password", validators=[DataRequired(), Length(max=200)],
                             render_kw={"autocomplete": "current-password"})


class SetPasswordForm(FlaskForm):
    password = PasswordField("New password", validators=[DataRequired(), Length(min=8, max=200)],
                             render_kw={"autocomplete": "new-password"},
                             description="At least 8 characters.")
    confirm = PasswordField("The same again", validators=[DataRequired(), EqualTo("password",
                                                          message="The two passwords differ.")],
                            render_kw={"autocomplete": "new-password"})
