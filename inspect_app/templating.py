"""Jinja globals and filters every template may use: formatting only (the globals that ask the policy or a
town's profile are pages/template_globals.py)."""
from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from flask import Flask, current_app, request, url_for
from flask_wtf.csrf import generate_csrf
from jinja2 import FileSystemBytecodeCache
from markupsafe import Markup, escape
from wtforms.meta import DefaultMeta
from wtforms.widgets import (CheckboxInput, DateInput, FileInput, Input, NumberInput, PasswordInput, RadioInput, Select,
                             TextArea)
from wtforms.widgets.core import clean_key
from wtforms.widgets.core import html_params as wtforms_html_params

from inspect_app.labels import choices as label_choices
from inspect_app.labels import label
from inspect_app.links import public_link
from inspect_app.types import LOCAL_TZ
from inspect_app.units import FILTERS as UNIT_FILTERS


def has_endpoint(name: str) -> bool:
    """Whether a view exists, so shared navigation never links to a missing page."""
    return name in current_app.view_functions


def local_time(value: dt.datetime | None, fmt: str = "%b %-d, %Y %-I:%M %p") -> str:
    """A stored UTC time shown in the town's local time (`LOCAL_TZ`)."""
    if value is None:
        return "—"
    try:
        return value.astimezone(LOCAL_TZ).strftime(fmt)
    except OverflowError:  # a time stored before its year was checked (a photo's year 1): shown as it is, in UTC
        return f"{value:%Y-%m-%d %H:%M} UTC"


def local_date(value: dt.date | dt.datetime | str | None) -> str:
    """A day as people write it; a date stored in a report's details is an ISO string."""
    if value is None:
        return "—"
    if isinstance(value, str):
        value = dt.date.fromisoformat(value)
    if isinstance(value, dt.datetime):
        value = value.astimezone(LOCAL_TZ).date()
    return value.strftime("%b %-d, %Y")


def humanize(value: str | None) -> str:
    """`stop_work` → `Stop-work`, the way the regulation writes it."""
    if not value:
        return "—"
    words = {"stop_work": "stop-work", "pre_bury": "pre-bury", "walk_through": "walk-through"}
    text = words.get(value, value.replace("_", " "))
    return text[:1].upper() + text[1:]


def form_field(f, label=None, hint=None, **attrs) -> Markup:
    """One WTForms field with its label, hint and errors: `field` in _macros.html, which says how to call it.

    Python rather than a Jinja macro, for speed: a draft report shows a hundred fields. The markup is the
    macro's, spacing included, written with f-strings of escaped values (Markup.format is slower)."""
    if f.type in ("HiddenField", "CSRFTokenField"):
        return control(f, attrs)
    if f.type == "SubmitField":
        return control(f, {"class_": "btn"} | attrs)
    errors = f.errors if isinstance(f.errors, (list, tuple)) else []
    hint_text = hint if hint is not None else f.description
    field_id = escape(f.id)
    described = ([f"{f.id}-hint"] if hint_text else []) + ([f"{f.id}-error"] if errors else [])
    aria = {"aria-describedby": " ".join(described)} if described else {}
    if errors:
        aria["aria-invalid"] = "true"
    label_text = escape(label if label is not None else f.label.text)
    hint_html = f'<span class="hint" id="{field_id}-hint">{escape(hint_text)}</span>' if hint_text else ""
    errors_html = (f'<p class="field-error" id="{field_id}-error">'
                   + "<br>".join(f'<span class="visually-hidden">Error: </span>{escape(e)}' for e in errors)
                   + "</p>") if errors else ""
    html = f'<div class="field{" has-error" if errors else ""} field-{escape(f.type.lower())}">'
    if f.type == "BooleanField":
        html += (f'\n  <label class="check" for="{field_id}">{control(f, attrs | aria)} <span>{label_text}</span>'
                 f"</label>\n  {hint_html}{errors_html}")
    elif f.type == "RadioField" or hasattr(f.widget, "prefix_label"):
        described_by = "".join(f' {escape(k)}="{escape(v)}"' for k, v in aria.items())
        options = "".join(f'\n    <label class="check" for="{escape(o.id)}">{control(o, attrs)} '
                          f"<span>{escape(o.label.text)}</span></label>" for o in f)
        html += (f'\n  <fieldset id="{field_id}"{described_by}>\n    <legend>{label_text}</legend>\n    {hint_html}'
                 f"{options}\n    {errors_html}\n  </fieldset>")
    else:
        html += (f'\n  <label for="{field_id}">{label_text}</label>\n  {hint_html}\n  {control(f, attrs | aria)}'
                 f"\n  {errors_html}")
    return Markup(html + "\n</div>")


def pill(status) -> Markup:
    """A status badge in the status's words (`humanize`): "stop_work", "stop-work", "Stop work" or an Enum member
    all give `pill-stop-work`, "Stop-work"."""
    key = str(getattr(status, "value", status)).lower().strip().replace("_", "-").replace(" ", "-")
    words = humanize(key.replace("-", "_")) if key else ""
    return Markup(f'<span class="pill pill-{escape(key)}">{escape(words)}</span>')


def csrf() -> Markup:
    """The hidden CSRF input of a plain (non-WTForms) form."""
    return Markup(f'<input type="hidden" name="csrf_token" value="{escape(generate_csrf())}">')


def start_form(permit, start_type: str, start_label: str) -> Markup:
    """The one form that starts an inspection of `start_type` on `permit` (with the device's location when
    allowed); its button says `start_label`. On the permit page (its Inspections section and "What to do now",
    up to about ten of them) and on My day: Python rather than an included template, which cost more to include
    than what it wrote."""
    new_report = url_for("inspections.new", permit_id=permit.id, inspection_type=start_type)
    return Markup(
        f'<form class="inline" method="post" action="{escape(url_for("inspections.start", permit_id=permit.id))}"'
        ' hx-boost="false" data-geolocate>\n'
        f"  {csrf()}\n"
        f'  <input type="hidden" name="type" value="{escape(start_type)}">\n'
        # Where the service worker sends this form when the server cannot be reached: the held new report.
        f'  <input type="hidden" name="offline_page" value="{escape(new_report)}">\n'
        '  <input type="hidden" name="latitude" value="" data-latitude>\n'
        '  <input type="hidden" name="longitude" value="" data-longitude>\n'
        f'  <button class="btn" type="submit" data-start="{escape(start_type)}" data-busy="Starting…">'
        f"{escape(start_label)}</button>\n"
        "</form>")


# The report form's own inputs (inspections/_macros.html), which it shows a few hundred of: Python rather than Jinja
# macros, for speed, writing the macros' markup, spacing included (a macro call cost more than what it wrote).

def report_error(errors: dict, name: str) -> Markup:
    """The message refusing field `name`, if any, as its `aria-describedby` names it."""
    if not errors.get(name):
        return Markup("")
    return Markup(f'<p class="field-error" id="{escape(name)}-error"><span class="visually-hidden">Error: </span>'
                  f"{escape(errors[name])}</p>")


def report_aria(errors: dict, name: str, hint=None) -> Markup:
    """A field's `aria-describedby` (its hint, its error) and `aria-invalid` when refused."""
    ids = ([f"{name}-hint"] if hint else []) + ([f"{name}-error"] if errors.get(name) else [])
    described = f' aria-describedby="{escape(" ".join(ids))}"' if ids else ""
    return Markup(described + (' aria-invalid="true"' if errors.get(name) else ""))


def report_text(name: str, label, value, errors: dict, type: str = "text", hint=None, rows=0, attrs="") -> Markup:
    """A text input (a textarea with `rows`) of the report form, with its label, hint and error."""
    field, shown = escape(name), escape(value if value is not None else "")
    common = f'id="{field}" name="{field}" form="report-form"'
    if rows:
        control = (f'\n  <textarea {common} rows="{escape(rows)}"{report_aria(errors, name, hint)} {attrs}>{shown}'
                   "</textarea>\n  ")
    else:
        control = (f'\n  <input {common} type="{escape(type)}" value="{shown}"{report_aria(errors, name, hint)} '
                   f"{attrs}>\n  ")
    hint_html = f'<span class="hint" id="{field}-hint">{escape(hint)}</span>' if hint else ""
    return Markup(f'<div class="field{" has-error" if errors.get(name) else ""}">\n  <label for="{field}">'
                  f"{escape(label)}</label>\n  {hint_html}\n  {control}\n  {report_error(errors, name)}\n</div>")


def report_answers(name: str, legend, options, value, errors: dict) -> Markup:
    """One checklist answer as a row of segments: each a real radio input covering its whole label (a 48 px
    target), so the form, the drafts kept on the device and the outbox post it as before."""
    field = escape(name)
    segments = "".join(
        f'\n    <label class="segment segment-{escape(key)}" for="{field}-{escape(key)}"><input type="radio" '
        f'form="report-form" id="{field}-{escape(key)}" name="{field}" value="{escape(key)}" '
        f'{"checked" if value == key else ""}><span>{escape(label)}</span></label>' for key, label in options)
    return Markup(f'<fieldset class="answer{" has-error" if errors.get(name) else ""}" id="{field}" data-answer'
                  f'{report_aria(errors, name)}>\n  <legend>{escape(legend)}</legend>\n  <div class="segments">'
                  f"{segments}\n  </div>\n  {report_error(errors, name)}\n</fieldset>")


def report_answer_note(name: str, label, value, errors: dict) -> Markup:
    """The note of a checklist answer: shown for "no" and "unsafe" (static/app.css), and whenever it holds text or
    an error, so nothing typed is ever hidden."""
    kept = " answer-note-kept" if value or errors.get(name) else ""
    text = report_text(name, label, value, errors, attrs='placeholder="What was seen"')
    return Markup(f'<div class="answer-note{kept}">\n  {text}\n</div>')


def report_fix(name: str, fix: dict, condition, errors: dict, open_actions) -> Markup:
    """A condition's repair and corrective action on a draft (inspections/_cgp_checks.html, `fix`): folded away
    unless something was kept or refused for it, so a fix typed or refused is never hidden (`fix-kept`, shown
    whatever the answer); the repair, the day first observed, an open action to tie it to (`open_actions`) or
    the kind and owner of a new one."""
    kept = fix or errors.get(f"{name}-repair") or errors.get(f"{name}-first_observed") or errors.get(f"{name}-action")
    field, chosen, kind = escape(name), fix.get("action_id"), fix.get("kind")
    actions = "".join(
        f'<option value="{escape(a.id)}" {"selected" if a.id == chosen else ""}>{escape(a.description)} '
        f"(due {escape(local_time(a.due_at))})</option>" for a in open_actions)
    kinds = "".join(f'<option value="{escape(key)}" {"selected" if key == kind else ""}>{escape(words)}</option>'
                    for key, words in label_choices("action_kind"))
    repair = report_text(f"{name}-repair", "Repair needed", fix.get("repair"), errors, rows=2)
    first_observed = report_text(f"{name}-first_observed", "Date first observed", fix.get("first_observed"), errors,
                                 type="date")
    return Markup(
        f'\n<details class="fix{" fix-kept" if kept else ""}" id="{field}"{" open" if kept else ""}>\n'
        f'  <summary>If not: the repair and its corrective action <span class="muted">({escape(condition.text)}, '
        f"{escape(condition.citation)})</span></summary>\n"
        f"  {repair}\n  {first_observed}\n"
        f'  <div class="field{" has-error" if errors.get(f"{name}-action") else ""}">\n'
        f'    <label for="{field}-action">Corrective action</label>\n'
        f'    <select id="{field}-action" name="{field}-action" form="report-form">\n'
        f'      <option value="">— open a new one (kind and who does it, below) —</option>\n'
        f"      {actions}\n    </select>\n    {report_error(errors, f'{name}-action')}\n  </div>\n"
        f'  <div class="row">\n'
        f'    <div class="field{" has-error" if errors.get(f"{name}-kind") else ""}">\n'
        f'      <label for="{field}-kind">Kind of corrective action</label>\n'
        f'      <select id="{field}-kind" name="{field}-kind" form="report-form">\n'
        f'        <option value="">—</option>\n'
        f"        {kinds}\n      </select>\n      {report_error(errors, f'{name}-kind')}\n    </div>\n"
        f'    {report_text(f"{name}-owner_name", "Who does it", fix.get("owner_name"), errors)}\n'
        f"  </div>\n</details>")


def report_rows(reports, profile) -> Markup:
    """The rows of the permit page's list of reports (inspections/_permit_section.html), newest first as given:
    date (the report's link), type, inspector, evaluation, whether the 24-hour notice was given (§380-16 C(3),
    when `profile` requires it for that report) and status. Written here, not by the template's loop: a permit's
    year of weekly reports made this list the largest part of its page's markup."""
    rows = []
    for report in reports:
        amendment = ' <span class="muted">(amendment)</span>' if report.amends_id else ""
        if not profile.advance_notice.required_for(report.type, report.by_authority):
            notice = '<span class="muted">Not required</span>'
        else:
            notice = "Given" if report.notice_given else '<span class="pill pill-overdue">Not given</span>'
        rows.append(
            f'\n      <tr>\n        <td><a href="{escape(url_for("inspections.detail", inspection_id=report.id))}">'
            f"{escape(local_time(report.performed_at))}</a></td>\n"
            f"        <td>{escape(profile.name_of(report.type))}{amendment}</td>\n"
            f"        <td>{escape(report.inspector_name)}</td>\n"
            f"        <td>{escape(label(report.evaluation, 'evaluation'))}</td>\n"
            f"        <td>{notice}</td>\n"
            f"        <td>{'Submitted' if report.is_submitted else 'Draft'}</td>\n      </tr>\n    ")
    return Markup("".join(rows))


def report_photo_input(name: str, label, context=None, compact: bool = False) -> Markup:
    """Every photo input of the report form (the site's, a checklist item's, a point of discharge's, a
    finding's): camera or file, and under it each photo chosen, with its thumbnail, the time and place from its
    EXIF, a caption and "Mark up" (static/markup.js). Captions and shapes go with the form in its photos_caption
    and photos_markup fields, by each file's SHA-256. `context` names what a short label is of, for screen
    readers. The photos a device already uploaded for a form that came back refused are kept, not asked for
    again."""
    field, kept = escape(name), request.form.getlist(f"{name}_sha256")
    about = f'<span class="visually-hidden">: {escape(context)}</span>' if context else ""
    hidden = ' class="visually-hidden"' if compact else ""
    kept_html = "".join(f'<input type="hidden" name="{field}_sha256" value="{escape(sha)}" form="report-form">'
                        for sha in kept)
    if kept:
        kept_html += f'<p class="hint">{len(kept)} photo(s) already uploaded are kept.</p>'
    return Markup(f'<div class="field photo-field{" photo-field-compact" if compact else ""}" data-photo-field>\n'
                  f'  <label for="{field}">{escape(label)}{about}</label>\n'
                  f'  <input type="file" id="{field}" name="{field}" form="report-form" accept="image/*" '
                  f'capture="environment" multiple{hidden}>\n'
                  f'  {kept_html}\n  <ul class="photo-previews" data-photo-previews></ul>\n</div>')


def control(f, attrs: dict) -> Markup:
    """What `f(**attrs)` renders (WTForms' own widget, with the field's `render_kw` under `attrs`), the same
    markup to the byte, for the widgets the app's forms use: inputs, check boxes, radio buttons, text areas and
    plain selects. WTForms writes each attribute with `Markup.format`, which parses its template every time:
    on the permit page, with its twenty forms, that was a tenth of the page's CPU. Any other widget, or a form
    that renders its fields its own way (`Meta.render_field`), is WTForms' own call. tests/test_form_controls.py
    holds every field of every form of the app to WTForms' markup."""
    if f.meta.render_field.__func__ is not DefaultMeta.render_field:
        return f(**attrs)
    widget, kwargs = f.widget, (f.render_kw or {}) | attrs
    kind = type(widget)
    if kind.__call__ in _INPUT_CALLS and kind.html_params is wtforms_html_params \
            and getattr(f, "_datalist", None) is None:
        if (kind.__call__ is CheckboxInput.__call__ and getattr(f, "checked", f.data)
                or kind.__call__ is RadioInput.__call__ and f.checked):
            kwargs.setdefault("checked", True)
        elif kind.__call__ is NumberInput.__call__:
            for key in ("step", "min", "max"):
                if getattr(widget, key) is not None:
                    kwargs.setdefault(key, getattr(widget, key))
        elif kind.__call__ is _DATE_CALL and getattr(f, "format", None) is not None:
            _date_bounds(f, kwargs)
        elif kind.__call__ is PasswordInput.__call__ and widget.hide_value:
            kwargs["value"] = ""
        elif kind.__call__ is FileInput.__call__:
            kwargs["value"] = False  # a browser ignores a file input's value
            if widget.multiple:
                kwargs["multiple"] = True
        kwargs.setdefault("id", f.id)
        kwargs.setdefault("type", widget.input_type)
        if "value" not in kwargs:
            kwargs["value"] = f._value()
        _validation_attrs(widget, f, kwargs, call=True)
        return Markup(f"<input {_html_params(f.name, kwargs)}>")
    if kind is TextArea:
        kwargs.setdefault("id", f.id)
        _validation_attrs(widget, f, kwargs)
        return Markup(f"<textarea {_html_params(f.name, kwargs)}>\r\n{escape(f._value())}</textarea>")
    if kind is Select and not f.has_groups():
        kwargs.setdefault("id", f.id)
        if widget.multiple:
            kwargs["multiple"] = True
        _validation_attrs(widget, f, kwargs)
        options = "".join(_option(choice) for choice in f._iter_choices_normalized())
        return Markup(f"<select {_html_params(f.name, kwargs)}>{options}</select>")
    return f(**attrs)


_DATE_CALL = DateInput.__call__  # every date and time input's: they share it (WTForms' _DateTimeBaseInput)
_INPUT_CALLS = (Input.__call__, CheckboxInput.__call__, RadioInput.__call__, NumberInput.__call__, _DATE_CALL,
                PasswordInput.__call__, FileInput.__call__)


def _date_bounds(f, kwargs: dict) -> None:
    """A date input's `min` and `max` (given, or the field's flags) written in the field's format."""
    fmt = f.format[0] if isinstance(f.format, list) else f.format
    for key in ("min", "max"):
        value = kwargs.get(key, getattr(f.flags, key, None))
        if callable(value):
            value = value()
        if hasattr(value, "strftime"):
            kwargs[key] = value.strftime(fmt)


def _validation_attrs(widget, f, kwargs: dict, call: bool = False) -> None:
    """The field's flags its widget writes as attributes (`required`, `maxlength`...), unless given."""
    flags = vars(f.flags) if hasattr(f, "flags") else {}
    for key in widget.validation_attrs:
        if key in flags and key not in kwargs:
            value = flags[key]
            kwargs[key] = value() if call and callable(value) else value


def _option(choice) -> str:
    value = str(choice.value) if isinstance(choice.value, bool) else choice.value
    options = {"value": value, **(choice.render_kw or {})}
    if choice.selected:
        options["selected"] = True
    return f"<option {_html_params(None, options)}>{escape(choice.label or choice.value)}</option>"


def _html_params(name: str | None, kwargs: dict) -> str:
    """WTForms' `html_params`, written with f-strings: sorted keys, `True` bare, `False` left out."""
    if name is not None:
        kwargs = {"name": name, **kwargs}
    params = []
    for key, value in sorted(kwargs.items()):
        if value is True:
            params.append(escape(clean_key(key)))
        elif value is not False:
            params.append(f'{escape(clean_key(key))}="{str(escape(value)).replace(chr(34), "&quot;")}"')
    return " ".join(params)


log = logging.getLogger(__name__)


class CompiledTemplates(FileSystemBytecodeCache):
    """Templates compiled once and kept as files in the instance folder (`compiled-templates/`), for every
    process of the app: a worker loads a template's code instead of compiling it, which costs CPU and, in
    a gunicorn worker, leaves about 6 MB more memory held for good (issue 18). Jinja checks each file against
    its template's source and its own and Python's versions, so an edited template is compiled again.

    A file that cannot be read or written (a folder not writable, a full disk) is only logged: the page is
    served all the same, from the template compiled in memory, as without this cache.
    """

    def __init__(self, instance_path: str) -> None:
        folder = Path(instance_path) / "compiled-templates"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            log.warning("compiled templates not kept: %s", error)
        super().__init__(str(folder))

    def load_bytecode(self, bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except OSError as error:
            log.warning("compiled template not read (%s): %s", bucket.key, error)

    def dump_bytecode(self, bucket) -> None:
        try:
            super().dump_bytecode(bucket)
        except OSError as error:
            log.warning("compiled template not kept (%s): %s", bucket.key, error)


def register(app: Flask, version: str) -> None:
    app.jinja_env.bytecode_cache = CompiledTemplates(app.instance_path)
    app.jinja_env.globals.update(has_endpoint=has_endpoint, label_choices=label_choices, app_version=version,
                                form_field=form_field, field=form_field, pill=pill, csrf=csrf, start_form=start_form,
                                report_error=report_error, report_aria=report_aria,
                                report_text=report_text, report_answers=report_answers,
                                report_answer_note=report_answer_note, report_photo_input=report_photo_input,
                                report_rows=report_rows, report_fix=report_fix, public_link=public_link)
    app.jinja_env.filters.update(local_time=local_time, local_date=local_date, humanize=humanize, label=label)
    app.jinja_env.filters.update(UNIT_FILTERS)
