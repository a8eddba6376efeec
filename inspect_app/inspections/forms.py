"""Forms of the inspections domain.

The start and notice forms are Flask-WTF forms. The report form is built from the town profile (one
answer per checklist item and subject, one row per structure, pipe run or punch-list item), so it is
parsed here by `parse_report` into a `ReportInput`, with a message per field it cannot read.
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from flask_wtf import FlaskForm
from werkzeug.datastructures import MultiDict
from wtforms import HiddenField, SelectChoice, SelectField, TextAreaField
from wtforms.validators import DataRequired, InputRequired, Length, NumberRange, Optional

from inspect_app import inspection_types, units
from inspect_app.accounts.policy import usable_blob
from inspect_app.extensions import db
from inspect_app.fields import DateTimeLocalField, FloatField, in_calendar, local_datetime
from inspect_app.inspections.models import ACTION_KINDS
from inspect_app.inspections import checks, queries, services
from inspect_app.inspections.models import ANSWERS, EVALUATIONS, OBSERVED_WEATHER_LENGTH, TRIGGERS, Inspection
from inspect_app.labels import DISCHARGE_SIGN_LABELS, DISCHARGING_LABELS
from inspect_app.rules import short_citation
from inspect_app.weather.models import StormEvent
from inspect_app.types import LOCAL_TZ, new_id, utcnow

TEXT_MAX = 10_000
NEW_CONTROL = re.compile(r"^control-new-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
NEW_DISCHARGE_POINT = re.compile(r"^discharge-new-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")


class StartForm(FlaskForm):
    type = HiddenField("Type", validators=[DataRequired()])
    # Filled by the page from the device's GPS when the inspector allows it.
    latitude = FloatField("Latitude", validators=[Optional(), NumberRange(-90, 90)])
    longitude = FloatField("Longitude", validators=[Optional(), NumberRange(-180, 180)])


class NoticeForm(FlaskForm):
    inspection_type = SelectField("Inspection", validators=[DataRequired(message="Choose the inspection.")])
    planned_for = DateTimeLocalField("Planned for", format="%Y-%m-%dT%H:%M",
                                     validators=[InputRequired(message="Give the planned date and time.")])
    note = TextAreaField("Note to the authority", validators=[Optional(), Length(max=2000)])


def notice_form(profile, **kwargs) -> NoticeForm:
    """The 24-hour notice form with the town's inspection types to choose from."""
    form = NoticeForm(prefix="notice", **kwargs)
    form.inspection_type.choices = [SelectChoice(k.key, k.name) for k in profile.inspection_types]
    # The town's hours and its own clause (or its policy), never another town's.
    notice = profile.advance_notice
    rule = notice.cited(short_citation(notice.citation))
    form.planned_for.description = f"At least {notice.hours} hours from now ({rule})."
    return form


def _text(form: MultiDict, name: str, errors: dict[str, str], limit: int = TEXT_MAX) -> str | None:
    value = (form.get(name) or "").strip()
    if len(value) > limit:
        errors[name] = f"Keep this under {limit} characters."
    return value or None


def _number(form: MultiDict, name: str, errors: dict[str, str], low: float, high: float) -> float | None:
    raw = (form.get(name) or "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        errors[name] = "Enter a number."
        return None
    if not low <= value <= high:
        errors[name] = f"Enter a number from {low:g} to {high:g}."
        return None
    return value


def _date(form: MultiDict, name: str, errors: dict[str, str], key: str | None = None,
          earliest: dt.date | None = None, before: str = "") -> dt.date | None:
    """A date typed in the report form, no later than today (and not before `earliest`, which `before` names)."""
    raw = (form.get(name) or "").strip()
    if not raw:
        return None
    try:
        value = dt.date.fromisoformat(raw)
    except ValueError:
        errors[key or name] = "Enter a date as YYYY-MM-DD."
        return None
    try:
        in_calendar(value)
    except ValueError as error:
        errors[key or name] = str(error)
        return None
    if value > utcnow().astimezone(LOCAL_TZ).date():
        errors[key or name] = "The date cannot be in the future."
        return None
    if earliest is not None and value < earliest:
        errors[key or name] = f"The date cannot be before {before} ({earliest:%b %-d, %Y})."
        return None
    return value


def parse_report(actor, inspection: Inspection, form: MultiDict) -> tuple[services.ReportInput, dict[str, str]]:
    """Read the report form `actor` posted; the second value names each field that could not be read."""
    errors: dict[str, str] = {}
    data = services.ReportInput(
        evaluation=(form.get("evaluation") or None), corrective_steps=_text(form, "corrective_steps", errors),
        # No signer is read from the form: whoever submits signs, with their account's credentials (services).
        notes=_text(form, "notes", errors), signature_data_url=(form.get("signature") or "").strip(),
    )
    if data.evaluation is not None and data.evaluation not in EVALUATIONS:
        errors["evaluation"] = "Choose in compliance, or violations."
    try:
        data.performed_at = (local_datetime(form["performed_at"], "Enter the date and time of the inspection.")
                             if form.get("performed_at") else None)
    except ValueError as error:
        errors["performed_at"] = str(error)
    data.gauge_precip_mm = _gauge(form, errors)
    data.observed_weather = _text(form, "observed_weather", errors, OBSERVED_WEATHER_LENGTH)
    _occasion(inspection, form, data, errors)
    if data.signature_data_url:
        try:
            data.signature_png = services.signature_png(data.signature_data_url)
        except services.InspectionError as error:
            errors["signature"], data.signature_data_url = str(error), ""
    data.permittee_signer_name = _text(form, "permittee_signer_name", errors, 120)
    data.permittee_signer_title = _text(form, "permittee_signer_title", errors, 120)
    data.permittee_signature_data_url = (form.get("permittee_signature") or "").strip()
    if data.permittee_signature_data_url:
        try:
            data.permittee_signature_png = services.signature_png(data.permittee_signature_data_url)
        except services.InspectionError as error:
            errors["permittee_signature"], data.permittee_signature_data_url = str(error), ""
    data.details = _details(inspection, form, errors)
    if inspection_types.spec(inspection.type).part == "system_acceptance":
        data.videos = _videos(actor, inspection, form, errors)
    if checks.discharges_asked(inspection):
        data.details |= _discharges(inspection, form, errors)
    unsafe = checks.unsafe_allowed(inspection)
    for item, found in queries.checklist(inspection, data.details):
        for subject in found:
            name = services.answer_field(item.key, subject.id)
            answer = form.get(name) or None
            if answer is not None and (answer not in ANSWERS or (answer == "unsafe" and not unsafe)):
                errors[name], answer = "Choose yes, no or n/a.", None
            note = _text(form, "note-" + name.removeprefix("answer-"), errors, 2000)
            data.answers[(item.key, subject.id)] = (answer, note)
    fixes = _fixes(inspection, form, errors, data.details)
    if fixes:
        data.details["fixes"] = fixes
    # The photos already taken on checklist items stay with them (the form posts only new ones).
    kept_photos = (inspection.details or {}).get("item_photos") or {}
    if kept_photos:  # copies: the stored record's own lists never change in place
        data.details["item_photos"] = {key: list(shas) for key, shas in kept_photos.items()}
    return data, errors


def _occasion(inspection: Inspection, form: MultiDict, data: services.ReportInput, errors: dict[str, str]) -> None:
    """Why and when (CGP 2022 Part 4.7.1): the trigger, the storm it answers, the end time and the phase."""
    try:
        data.ended_at = (local_datetime(form["ended_at"], "Enter the date and time the inspection ended.")
                         if form.get("ended_at") else None)
    except ValueError as error:
        errors["ended_at"] = str(error)
    data.construction_phase = _text(form, "construction_phase", errors, 200)
    data.trigger = form.get("trigger") or None
    if data.trigger is not None and data.trigger not in TRIGGERS:
        errors["trigger"], data.trigger = "Choose why this inspection was made.", None
    storm_id = form.get("storm_event_id") or None
    if storm_id is not None:
        storm = db.session.get(StormEvent, storm_id)
        if storm is None or storm.permit_id != inspection.permit_id:
            errors["storm_event_id"], storm_id = "Choose one of this permit's storms.", None
    data.storm_event_id = storm_id


def _discharges(inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> dict[str, Any]:
    """CGP: the points of discharge named on the report and what was seen at each (inspections/checks.py)."""
    stored = (inspection.details or {})
    known = {p["name"].lower(): p["id"] for p in stored.get("discharge_points", [])}
    typed = {line.strip().lower(): line.strip() for line in (form.get("discharge_points") or "").splitlines()
             if line.strip()}
    # Points added on the device as parts of the form (`discharge-new-<id>`), answered under that id.
    for name in form:
        added = NEW_DISCHARGE_POINT.match(name)
        if added and form[name].strip() and form[name].strip().lower() not in known:
            known[form[name].strip().lower()] = added.group(1)
            typed.setdefault(form[name].strip().lower(), form[name].strip())
    if len(typed) > 50 or any(len(n) > 120 for n in typed.values()):
        errors["discharge_points"] = "Name at most 50 points of discharge, each under 120 characters."
        typed = {}
    details: dict[str, Any] = {"discharge_points": [{"id": known.get(k) or new_id(), "name": n}
                                                    for k, n in typed.items()], "discharges": {}}
    kept = stored.get("discharges", {})
    for point in checks.discharge_points(inspection.permit, details):
        key = f"discharge-{point.id}"
        seen: dict[str, Any] = {"photos": (kept.get(point.id) or {}).get("photos", [])}
        for when in ("now", "since_last"):
            seen[when] = form.get(f"{key}-{when}") or None
            if seen[when] not in (None, *DISCHARGING_LABELS):
                errors[f"{key}-{when}"], seen[when] = "Choose discharging or not discharging.", None
        seen["signs"] = [s for s in form.getlist(f"{key}-signs") if s in DISCHARGE_SIGN_LABELS]
        seen["description"] = _text(form, f"{key}-description", errors, 2000)
        details["discharges"][point.id] = seen
    return details


def _fixes(inspection: Inspection, form: MultiDict, errors: dict[str, str],
           details: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The repair, date first observed and corrective action typed for each control or discharge that may need
    one (CGP 2022 Part 5.1); whether one is needed is decided on submission (`checks.problems`)."""
    keys = [checks.fix_key(item.key, subject.id) for item, found in queries.checklist(inspection, details)
            if item.corrective_condition for subject in found]
    if checks.discharges_asked(inspection):
        keys += [checks.discharge_fix_key(p.id) for p in checks.discharge_points(inspection.permit, details)]
    fixes, stored = {}, (inspection.details or {}).get("fixes", {})
    for key in keys:
        name = f"fix-{key}"
        stored_fix = stored.get(key) or {}
        # A condition of this site seen on an inspection of it: not before its permit was issued. A day kept already (an
        # amendment's, copied from the report it corrects) stays as it was signed, if the issue date moved since.
        typed = (form.get(f"{name}-first_observed") or "").strip()
        signed_day = typed and typed == stored_fix.get("first_observed")
        observed = _date(form, f"{name}-first_observed", errors,
                         earliest=None if signed_day else inspection.permit.issued_on,
                         before="the permit was issued")
        fix = {"repair": _text(form, f"{name}-repair", errors, 2000),
               "first_observed": observed.isoformat() if observed else None,
               "action_id": _text(form, f"{name}-action", errors, 36),
               "kind": form.get(f"{name}-kind") or None, "owner_name": _text(form, f"{name}-owner_name", errors, 200)}
        if fix["kind"] not in (None, *ACTION_KINDS):
            errors[f"{name}-kind"], fix["kind"] = "Choose the kind of corrective action.", None
        kept = stored_fix.get("action_id")
        if not fix["action_id"] and checks.opened_here(inspection, kept):
            # The action this fix opened stays its own: a page not loaded again since (the background save as the
            # inspector goes, a second tab) still offers "open a new one", and must not open a second.
            fix["action_id"] = kept
        if fix["action_id"] and fix["action_id"] != kept and checks.linked_action(inspection, fix["action_id"]) is None:
            # Only an open action of this permit the author may see (an id typed into a hand-made post is not);
            # the one the draft already holds stays, though verified since (an amendment keeps its links).
            errors[f"{name}-action"], fix["action_id"] = "Choose an open corrective action of this permit.", None
        if any(fix.values()):
            fixes[key] = fix
    return fixes


def _gauge(form: MultiDict, errors: dict[str, str]) -> float | None:
    """(f) The on-site rain-gauge reading typed in inches, in mm; blank means no reading."""
    raw = (form.get("gauge_precip_in") or "").strip()
    if not raw:
        return None
    try:
        return services.gauge_mm(float(raw))
    except services.InspectionError as error:
        errors[error.field] = str(error)
    except ValueError:
        errors["gauge_precip_in"] = "Enter the rain-gauge reading in inches, like 0.50."
    return None


def _details(inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> dict[str, Any]:
    """The type's own part of the report (inspection_types: `part`), stored in `Inspection.details`."""
    read = PART_READERS.get(inspection_types.spec(inspection.type).part)
    return read(inspection, form, errors) if read else {}


def _site_conditions(inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> dict[str, Any]:
    """The initial inspection's record of the site before work (§380-16 C(4)(a))."""
    return {name: _text(form, name, errors) for name in ("existing_conditions", "resource_areas", "test_pits")}


def _controls_part(inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> dict[str, Any]:
    """The erosion-control report's other controls, by name."""
    return {"controls": _controls(inspection, form, errors)}


def _structures_part(inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> dict[str, Any]:
    """The underground structures a pre-bury report covers, each with what was seen."""
    return {"structures": _pre_bury(inspection, form, errors)}


def _controls(inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> list[dict[str, str]]:
    """Controls listed on the report, one per line; a name keeps its id so its answers stay with it."""
    known = {c["name"].lower(): c["id"] for c in (inspection.details or {}).get("controls", [])}
    names = [line.strip() for line in (form.get("controls") or "").splitlines() if line.strip()]
    # Controls added on the device as parts of the form (`control-new-<id>`), answered under that id.
    for key in form:
        typed = NEW_CONTROL.match(key)
        if typed and form[key].strip() and form[key].strip().lower() not in known:
            known[form[key].strip().lower()] = typed.group(1)
            names.append(form[key].strip())
    if len(names) > 100 or any(len(n) > 120 for n in names):
        errors["controls"] = "List at most 100 controls, each under 120 characters."
        names = [n[:120] for n in names[:100]]
    # One control per name whatever its case ("Silt fence", "silt fence"): each id answers one row.
    unique: dict[str, str] = {}
    for name in names:
        unique.setdefault(name.lower(), name)
    return [{"id": known.get(key) or new_id(), "name": name} for key, name in unique.items()]


def _pre_bury(inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> dict[str, dict[str, Any]]:
    parts = {}
    for s in queries.underground_structures(inspection.permit):
        key = f"pb-{s.id}"
        as_designed = form.get(f"{key}-as_designed") or None
        if as_designed not in (None, "yes", "no"):
            errors[f"{key}-as_designed"], as_designed = "Choose yes or no.", None
        parts[s.id] = {
            "covered": form.get(f"{key}-covered") == "1", "as_designed": as_designed,
            "size": _text(form, f"{key}-size", errors, 120), "invert": _text(form, f"{key}-invert", errors, 120),
            "material": _text(form, f"{key}-material", errors, 120),
            "groundwater_separation_ft": _number(form, f"{key}-separation_ft", errors, 0, 1000),
        }
    return parts


def _final(inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> dict[str, Any]:
    resolutions = {item.id: _text(form, f"punch-{item.id}", errors, 2000)
                   for item in queries.open_punch_items(inspection.permit)}
    # §380-16 C(4)(e)[2]: "the effectiveness of the system in an actual storm": one the system was there for, so not
    # one before construction started.
    storm_date = _date(form, "storm_date", errors, earliest=inspection.permit.construction_started_on,
                       before="construction started on this permit")
    depth_in = _number(form, "storm_depth_in", errors, 0.01, 30)
    return {
        "punch_resolutions": {k: v for k, v in resolutions.items() if v},
        # Stored in SI units, shown in inches (SPEC *Weather*).
        "storm": {"date": storm_date.isoformat() if storm_date else None,
                  "depth_mm": units.in_to_mm(depth_in) if depth_in else None},
        "certification": {"certified": form.get("certified") == "1",
                          "text": _text(form, "certification_text", errors, 2000)},
    }


def _videos(actor, inspection: Inspection, form: MultiDict, errors: dict[str, str]) -> dict[str, dict[str, Any]]:
    videos = {}
    for s in queries.pipe_runs(inspection.permit):
        key = f"video-{s.id}"
        sha = (form.get(f"{key}-blob_sha256") or "").strip().lower() or None
        if sha and not usable_blob(actor, sha):  # not stored, or not theirs: the same words
            errors[key], sha = "No uploaded file has that SHA-256; upload the video first or give a reference.", None
        videos[s.id] = {"recorded_on": _date(form, f"{key}-recorded_on", errors, key),
                        "reference": _text(form, f"{key}-reference", errors, 300), "blob_sha256": sha}
    return videos


# Each part of a report the registry names (inspection_types.Part), read from the posted form.
PART_READERS = {
    "site_conditions": _site_conditions,
    "controls": _controls_part,
    "structures": _structures_part,
    "system_acceptance": _final,
}
