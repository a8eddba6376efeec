"""Helpers for report tests: read a page's report form the way a browser would, and fill it in."""
from __future__ import annotations

import html
import datetime as dt
import re
import uuid
from html.parser import HTMLParser

from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.mail.models import OutboundEmail
from tests.builders import signature_data_url


# What the report page says beside "Station:" while (e) the station's weather is pending, and what a careful
# inspector then writes in "Weather you observed on site".
STATION_PENDING = "filled in by the server when the station reports"
OBSERVED_WEATHER = "Overcast, light drizzle, about 48 °F, wind light from the northeast"


class _Controls(HTMLParser):
    """Collects the controls that belong to the form with id `form_id` (inside it or via form=...)."""

    def __init__(self, form_id: str):
        super().__init__()
        self.form_id, self.inside, self.values, self.names = form_id, False, {}, []
        self._textarea: str | None = None

    def _mine(self, attrs: dict) -> bool:
        return attrs.get("form") == self.form_id or (self.inside and "form" not in attrs)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and a.get("id") == self.form_id:
            self.inside = True
        if tag == "input" and a.get("name") and self._mine(a):
            self.names.append(a["name"])
            kind = a.get("type", "text")
            if kind in ("radio", "checkbox"):
                if "checked" in a:
                    self.values[a["name"]] = a.get("value", "on")
            elif kind not in ("submit", "button"):
                self.values[a["name"]] = a.get("value", "")
        if tag == "textarea" and a.get("name") and self._mine(a):
            self.names.append(a["name"])
            self._textarea, self.values[a["name"]] = a["name"], ""

    def handle_data(self, data):
        if self._textarea:
            self.values[self._textarea] += data

    def handle_endtag(self, tag):
        if tag == "textarea":
            self._textarea = None
        if tag == "form":
            self.inside = False


def report_form(html: str) -> tuple[dict[str, str], list[str]]:
    """What a browser would post from the page's report form as it stands, and every control name."""
    parser = _Controls("report-form")
    parser.feed(html)
    values = {k: v.strip("\n") for k, v in parser.values.items()}
    values.pop("csrf_token", None)
    return values, list(dict.fromkeys(parser.names))


def filled(html: str, **overrides) -> dict[str, str]:
    """The report form with every item answered as a careful inspector would, then `overrides`."""
    values, names = report_form(html)
    yesterday = (dt.date.today() - dt.timedelta(days=1)).isoformat()
    for name in names:
        if name.startswith("answer-"):
            values[name] = "yes"
        elif name.endswith("-covered") and name.startswith("pb-"):
            values.setdefault(name, "1")
        elif name.endswith("-as_designed"):
            values[name] = "yes"
        elif name.startswith("pb-") and name.endswith("-size"):
            values[name] = "24 in HDPE, 40 ft"
        elif name.startswith("punch-"):
            values[name] = "Done and checked on site."
        elif name.endswith("-recorded_on"):
            values[name] = yesterday
        elif name.startswith("video-") and name.endswith("-reference"):
            values[name] = "CCTV run 7, contractor's report 2026-118"
    for name in ("existing_conditions", "resource_areas", "test_pits"):
        if name in names:
            values[name] = f"As shown on the plan ({name.replace('_', ' ')})."
    if "storm_date" in names:
        values.update(storm_date=yesterday, storm_depth_in="0.80", certified="1")
    if "permittee_signature" in names:  # the town asks for the permittee's authorized signatory too
        values.update(permittee_signer_name="Morgan Lee", permittee_signer_title="President",
                      permittee_signature=signature_data_url(5))
    if "observed_weather" in names and not values.get("observed_weather") and STATION_PENDING in html:
        # (e) The station has not reported: the inspector writes down the weather seen on site.
        values["observed_weather"] = OBSERVED_WEATHER
    values.update(evaluation="compliant", signature=signature_data_url())
    values.update(overrides)
    return {k: v for k, v in values.items() if v is not None}


def start(client, permit, kind: str, **location) -> Inspection:
    """Tap "Start" for `kind` on the permit page; returns the new draft."""
    response = client.post(f"/permits/{permit.id}/inspections", {"type": kind, **location})
    assert response.status_code == 303, response.text
    inspection_id = response.headers["Location"].rsplit("/", 1)[-1]
    return db.session.get(Inspection, inspection_id)


def submit(client, inspection: Inspection, **overrides):
    """Open the draft, fill every field, and press "Sign and submit"."""
    page = client.get(f"/inspections/{inspection.id}")
    assert page.status_code == 200, page.text
    return client.post(f"/inspections/{inspection.id}/submit", filled(page.text, **overrides))


def save_with_finding(client, inspection: Inspection, description: str, **fields):
    """Open the draft, add a finding (a repeatable part of the report form: `fields` by the finding form's
    names, e.g. severity="major") and press "Save draft"."""
    page = client.get(f"/inspections/{inspection.id}")
    assert page.status_code == 200, page.text
    part = f"finding-new-{uuid.uuid4()}-"
    finding = {part + name: value for name, value in {"severity": "minor", **fields}.items()}
    return client.post(f"/inspections/{inspection.id}",
                       report_form(page.text)[0] | {part + "description": description} | finding)


def save_with_punch(client, inspection: Inspection, *descriptions: str):
    """Open the draft walk-through, add one punch-list item (a repeatable part of the report form) for each
    description, and press "Save draft"."""
    page = client.get(f"/inspections/{inspection.id}")
    assert page.status_code == 200, page.text
    items = {f"punch-new-{uuid.uuid4()}-description": description for description in descriptions}
    return client.post(f"/inspections/{inspection.id}", report_form(page.text)[0] | items)


def mail_to(address: str) -> list[OutboundEmail]:
    """The stored messages sent to `address`."""
    return [m for m in db.session.scalars(select(OutboundEmail)) if address in m.to]


def error_beside(page: str, name: str) -> str:
    """The error message shown beside the field `name` ('' if none)."""
    match = re.search(rf'<p class="field-error" id="{re.escape(name)}-error">(.*?)</p>', page, re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).replace("Error: ", "").strip() if match else ""
