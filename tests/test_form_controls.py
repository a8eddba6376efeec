"""Every form field the app renders through `templating.control` gets WTForms' own markup, to the byte."""
from __future__ import annotations

import datetime as dt
import importlib
import pkgutil

import pytest
from flask_wtf import FlaskForm
from markupsafe import Markup
from wtforms import SelectChoice, SelectFieldBase
from wtforms.meta import DefaultMeta

import inspect_app
from inspect_app.templating import control

# What templates pass: none, the report form's `form=`, classes, ARIA, booleans, and values that need escaping.
ATTRS = ({}, {"form": "report-form", "class_": "wide"}, {"rows": 2, "aria-describedby": "x-hint x-error"},
         {"aria-invalid": "true", "data_geo": 'a "b" <c> & d', "disabled": True, "readonly": False},
         {"placeholder": Markup('What "was" <b>seen</b>'), "value": "given", "id": "other-id"},
         {"min": dt.date(2026, 4, 1), "max": dt.datetime(2026, 12, 4, 16, 30), "step": 60})
TEXT = 'Silt fence "down" <at> the inlet & the swale'


def _app_forms() -> list[type[FlaskForm]]:
    for module in pkgutil.walk_packages(inspect_app.__path__, "inspect_app."):
        if module.name.endswith(".forms"):
            importlib.import_module(module.name)
    found, todo = [], list(FlaskForm.__subclasses__())
    while todo:
        form = todo.pop()
        found.append(form)
        todo.extend(form.__subclasses__())
    return [form for form in found if form.__module__.startswith("inspect_app.")]


def _posted(form) -> dict[str, object]:
    """A post filling every field: text that needs escaping, the second choice of each select, a ticked box."""
    data = {}
    for field in form:
        kind = field.type
        data[field.name] = "y" if kind == "BooleanField" else "b" if isinstance(field, SelectFieldBase) \
            else "2026-05-04" if kind == "DateField" else "2026-05-04T09:30" if "DateTime" in kind \
            else "12.5" if kind in ("IntegerField", "FloatField", "DecimalField") else TEXT
    return data


def _forms(app, form_class):
    """The form empty and as posted (with its errors), each choice field given choices with one to escape."""
    with app.test_request_context():
        posts = (None, _posted(form_class(formdata=None)))
    for data in posts:
        with app.test_request_context(method="POST" if data else "GET", data=data or {}):
            form = form_class() if data else form_class(formdata=None)
            for field in form:
                if isinstance(field, SelectFieldBase) and not field.choices:
                    field.choices = [SelectChoice("a", "First"), SelectChoice("b", 'Second "quoted" <one>'),
                                     SelectChoice("", "None of these")]
            if data:
                form.validate()
            yield form


def test_every_field_of_every_form_renders_as_wtforms_renders_it(app, monkeypatch):
    compared, widgets, asked_wtforms = 0, set(), []
    render_field = DefaultMeta.render_field
    monkeypatch.setattr(DefaultMeta, "render_field",
                        lambda meta, field, kw: asked_wtforms.append(field) or render_field(meta, field, kw))
    for form_class in _app_forms():
        for form in _forms(app, form_class):
            with app.test_request_context():
                for field in form:
                    parts = [field] + (list(field) if field.type in ("RadioField", "CheckboxesField",
                                                                   "SelectMultipleField") else [])
                    for part in parts:
                        for attrs in ATTRS:
                            if "value" in attrs and part.type in ("RadioField", "SelectField"):
                                continue  # a select or a group of radios has no value attribute of its own
                            asked_wtforms.clear()
                            ours = control(part, dict(attrs))
                            if not asked_wtforms:  # written by `control` itself, not handed to WTForms
                                widgets.add(type(part.widget).__name__)
                            assert ours == part(**attrs), (form_class.__name__, part.name, attrs)
                            compared += 1
    assert compared > 1000
    # Each widget the app's forms use is written by `control` itself (the rest would be WTForms' own call).
    assert {"TextInput", "TextArea", "Select", "CheckboxInput", "RadioInput", "HiddenInput", "NumberInput",
            "DateTimeLocalInput", "DateInput", "PasswordInput", "EmailInput", "FileInput", "TimeInput"} <= widgets


@pytest.mark.parametrize("checked", [True, False])
def test_a_ticked_box_and_a_chosen_radio_are_marked_as_wtforms_marks_them(app, checked):
    from wtforms import BooleanField, RadioField

    class Form(FlaskForm):
        agree = BooleanField("Agree")
        answer = RadioField("Answer", choices=[SelectChoice("yes", "Yes"), SelectChoice("no", "No")])

    with app.test_request_context(method="POST", data={"agree": "y", "answer": "no"} if checked else {}):
        form = Form()
        rendered = [control(form.agree, {})] + [control(option, {}) for option in form.answer]
        assert rendered == [form.agree()] + [option() for option in form.answer]
        assert ("checked" in rendered[0]) is checked and ("checked" in rendered[2]) is checked
