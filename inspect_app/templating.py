"""Jinja globals and filters every template may use: formatting only (the globals that ask the policy or a
town's profile are pages/template_globals.py)."""
from __future__ import annotations

import datetime as dt
import logging
from pathlib import Path

from flask import Flask, current_app
from jinja2 import FileSystemBytecodeCache
from markupsafe import Markup, escape

from inspect_app.labels import choices as label_choices
from inspect_app.labels import label
from inspect_app.types import LOCAL_TZ
from inspect_app.units import FILTERS as UNIT_FILTERS


def has_endpoint(name: str) -> bool:
    """Whether a view exists, so shared navigation never links to a missing page."""
    return name in current_app.view_functions


def local_time(value: dt.datetime | None, fmt: str = "%b %-d, %Y %-I:%M %p") -> str:
    """A stored UTC time shown in the town's local time (`LOCAL_TZ`)."""
    if value is None:
        return "—"
    return value.astimezone(LOCAL_TZ).strftime(fmt)


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
        return f(**attrs)
    if f.type == "SubmitField":
        return f(**({"class_": "btn"} | attrs))
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
        html += (f'\n  <label class="check" for="{field_id}">{f(**attrs | aria)} <span>{label_text}</span></label>'
                 f"\n  {hint_html}{errors_html}")
    elif f.type == "RadioField" or hasattr(f.widget, "prefix_label"):
        described_by = "".join(f' {escape(k)}="{escape(v)}"' for k, v in aria.items())
        options = "".join(f'\n    <label class="check" for="{escape(o.id)}">{o(**attrs)} <span>{escape(o.label.text)}'
                          "</span></label>" for o in f)
        html += (f'\n  <fieldset id="{field_id}"{described_by}>\n    <legend>{label_text}</legend>\n    {hint_html}'
                 f"{options}\n    {errors_html}\n  </fieldset>")
    else:
        html += f'\n  <label for="{field_id}">{label_text}</label>\n  {hint_html}\n  {f(**attrs | aria)}\n  {errors_html}'
    return Markup(html + "\n</div>")


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
                                form_field=form_field)
    app.jinja_env.filters.update(local_time=local_time, local_date=local_date, humanize=humanize, label=label)
    app.jinja_env.filters.update(UNIT_FILTERS)
