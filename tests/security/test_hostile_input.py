"""Hostile values in every form and every query parameter: a plain 4xx or a normal page, never a 5xx.

The forms are not listed here: the test signs in as each kind of user, opens every page of the URL map
it can fill with ids of real records, reads every POST form on those pages, and sends each form back
with its rendered values and one field at a time replaced by a hostile value. Query parameters: every
GET page with every parameter the app reads set to each hostile value at once.
"""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import quote

import pytest
from flask import got_request_exception

from factories import SignedIn

from inspect_app.extensions import db
from inspect_app.findings import services as findings

NUL = "a\x00b"
HUGE_TEXT = "x" * 100_000
SCRIPTS = "Ωμέγα 日本語 العربية ✓ 🌧"
# For every field.
ANY_FIELD = ["", NUL, HUGE_TEXT, SCRIPTS, "9" * 30]
# More for fields that hold a number, a date or a choice.
NUMBERS = ["9" * 400, "-1", "NaN", "inf", "1e309", "²", "١٢", "99999999999"]  # (past 32 bits, and NUMERIC(12,2))
DATES = ["9999-12-31", "0001-01-01", "10000-01-01", "9999-12-31T23:59", "0001-01-01T00:00"]
CHOICES = ["00000000-0000-0000-0000-000000000000", "-1"]
QUERY_VALUES = [NUL, "9" * 30, "-1", "NaN", "²", "١٢", SCRIPTS, "x" * 8000, "9999-12-31"]
# Every query parameter the app reads (grep request.args, db.paginate).
QUERY_PARAMETERS = ["page", "per_page", "days", "town", "status", "inspector", "kind", "sort", "upcoming",
                    "cursor", "limit", "next", "target", "inspection_id", "finding_id", "action_id"]


UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class Forms(HTMLParser):
    """The POST forms of a page: action, and each field's name, kind and rendered value."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self.links: set[str] = set()
        self._form: dict | None = None
        self._by_id: dict[str | None, dict] = {}
        self._textarea: tuple[dict, str] | None = None
        self._select: tuple[dict, str] | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "a" and (a.get("href") or "").startswith("/") and not a["href"].startswith("//"):
            self.links.add(a["href"].split("#")[0])
        if tag == "form":
            method = (a.get("method") or "get").lower()
            action = a.get("hx-post") or a.get("action")
            self._form = {"action": action, "fields": {}, "kinds": {}} if method == "post" and action else None
            if self._form is not None:
                self.forms.append(self._form)
                self._by_id[a.get("id")] = self._form
            return
        if tag == "option" and self._select:
            form, name = self._select
            value = a.get("value", "")
            if "selected" in a or (not form["fields"].get(name) and value):
                form["fields"][name] = value
            return
        # A control outside its form names it with form="id" (the report form does).
        form = self._by_id.get(a["form"]) if a.get("form") else self._form
        if form is None:
            return
        if tag == "button" and a.get("formaction"):
            self.forms.append({**form, "action": a["formaction"]})  # the same fields, sent elsewhere
        if not a.get("name"):
            return
        name, fields, kinds = a["name"], form["fields"], form["kinds"]
        if tag == "input":
            kind = (a.get("type") or "text").lower()
            if kind in ("submit", "button", "image", "reset"):
                return
            kinds.setdefault(name, kind)
            if kind == "file":
                return
            if kind in ("checkbox", "radio"):
                if "checked" in a or (kind == "radio" and name not in fields):
                    fields[name] = a.get("value", "on")
                return
            fields[name] = a.get("value", "")
        elif tag == "textarea":
            kinds[name] = "textarea"
            fields[name] = ""
            self._textarea = (form, name)
        elif tag == "select":
            kinds[name] = "select"
            fields.setdefault(name, "")
            self._select = (form, name)

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            form, name = self._textarea
            form["fields"][name] += data


def hostile_values(kind: str) -> list[str]:
    if kind in ("number", "range"):
        return ANY_FIELD + NUMBERS
    if kind in ("date", "datetime-local", "time", "month"):
        return ANY_FIELD + DATES + NUMBERS[:1]
    if kind in ("select", "radio", "hidden", "checkbox"):
        return ANY_FIELD + CHOICES
    return ANY_FIELD


@pytest.fixture
def world(make):
    """One permit with something of every kind, and one person of each role who may act on it."""
    owner = make.user("permittee")
    inspector = make.user("inspector")
    people = {"agent": make.user("agent"), "inspector": inspector, "permittee": owner,
              "admin": make.user("admin", town=None)}
    permit = make.permit(owner=owner, inspectors=[inspector], areas=["North lot"], structures=["Pipe A"])
    draft = make.inspection(permit, status="draft", evaluation=None, inspector=inspector,
                           latitude=42.0501, longitude=-72.5828, location_source="device")
    submitted = make.inspection(permit, "periodic", evaluation="violations", inspector=inspector,
                                latitude=42.0501, longitude=-72.5828, location_source="device")
    finding = make.finding(permit, submitted)
    action = findings.open_action(inspector, finding, "routine_maintenance", "Reset the silt fence",
                                 owner_name="Site crew")
    db.session.commit()
    photo = make.photo(permit, inspection=draft)
    ids = {"permit_id": permit.id, "inspection_id": draft.id, "finding_id": finding.id,
           "action_id": action.id, "photo_id": photo.id, "structure_id": permit.structures[0].id,
           "area_id": permit.areas[0].id, "user_id": inspector.id, "kind": "thumb",
           "inspection_type": "erosion_control", "filename": "app.css"}
    return people, ids


def _get_urls(app, ids: dict) -> list[str]:
    urls = []
    for rule in app.url_map.iter_rules():
        if "GET" not in rule.methods or not set(rule.arguments) <= set(ids):
            continue
        url = rule.rule
        for name in rule.arguments:
            url = re.sub(rf"<(?:[a-z]+:)?{name}>", ids[name], url)
        urls.append(url)
    return sorted(set(urls))


@pytest.fixture
def crashes(app):
    """Each exception a request raised, by its type and message (the test answers them as 500s)."""
    app.config["PROPAGATE_EXCEPTIONS"] = False
    found: list[str] = []

    def keep(sender, exception, **extra):
        found.append(f"{type(exception).__name__}: {str(exception)[:200]}")

    got_request_exception.connect(keep, app)
    yield found
    got_request_exception.disconnect(keep, app)


def test_every_form_and_query_parameter_answers_hostile_values_without_a_5xx(app, world, signed_in, crashes):
    people, ids = world
    # The hostile sign-ins must not lock the walk out (accounts/throttle.py counts three ways).
    app.config.update({name: "100000 per minute" for name in
                       ("SIGNIN_FAILURE_LIMIT", "SIGNIN_ADDRESS_LIMIT", "SIGNIN_ACCOUNT_LIMIT")})
    urls = _get_urls(app, ids)
    failures, tried_forms, tried_queries, seen = [], 0, 0, set()
    reader: dict[str, str] = {}  # each page that opened, and the first of them it opened for
    for role in ("agent", "inspector", "permittee", "admin"):
        browser = signed_in(people[role])
        queue, opened = list(urls), set()
        while queue:
            url = queue.pop(0)
            if url in opened or url.startswith("/static/") or len(opened) > 150:
                continue
            opened.add(url)
            page = browser.get(url)
            page.close()
            if page.status_code >= 500:
                failures.append((role, "GET", url, page.status_code))
            if page.status_code != 200:
                continue
            reader.setdefault(url.split("?")[0], role)
            if not page.content_type.startswith("text/html"):
                continue
            parser = Forms()
            parser.feed(page.text)
            queue.extend(link for link in sorted(parser.links) if not link.endswith((".pdf", ".ics")))
            for form in parser.forms:
                key = (UUID.sub("<id>", form["action"]), tuple(sorted(form["kinds"])))
                if key in seen or form["action"].endswith("/logout"):
                    continue
                seen.add(key)
                large = len(form["kinds"]) > 10
                for index, (name, kind) in enumerate(form["kinds"].items()):
                    if name == "csrf_token" or kind == "file":
                        continue
                    values = hostile_values(kind)
                    if large:  # a long form (the report): each field gets NUL and one of the rest, in turn
                        values = [NUL, values[index % len(values)]]
                    for value in values:
                        data = {**form["fields"], name: value}
                        data.pop("csrf_token", None)
                        response = browser.post(form["action"], data)
                        response.close()
                        tried_forms += 1
                        if response.status_code >= 500:
                            failures.append((role, "POST", form["action"], name, value[:20], response.status_code))
                    # A field sent twice (a list where one value is expected); in a long form, every third field.
                    if large and index % 3:
                        continue
                    response = browser.post(form["action"], {**form["fields"], name: ["1", "2"]})
                    response.close()
                    tried_forms += 1
                    if response.status_code >= 500:
                        failures.append((role, "POST", form["action"], name, "list", response.status_code))
    # Query parameters: each page once (one of each shape), as the first person it opened for.
    shapes: dict[str, tuple[str, str]] = {}
    for url, role in reader.items():
        shapes.setdefault(UUID.sub("<id>", url), (url, role))
    browsers = {role: SignedIn(app.test_client(), person) for role, person in people.items()}
    for url, role in sorted(shapes.values()):
        for value in QUERY_VALUES:
            query = "&".join(f"{p}={quote(value)}" for p in QUERY_PARAMETERS)
            response = browsers[role].get(f"{url}?{query}")
            response.close()
            tried_queries += 1
            if response.status_code >= 500:
                failures.append((role, "GET", url, value[:20], response.status_code))
    print(f"hostile_form_values_tried={tried_forms} hostile_query_values_tried={tried_queries} "
          f"forms={len(seen)}")
    assert len(seen) >= 20, "the walk found too few forms: the world fixture lost its records"
    assert failures == [], (sorted(set(crashes)), [UUID.sub("<id>", str(f)) for f in failures])


# A JSON body where a form's fields are expected: Flask-WTF read it as the form's fields.
JSON_BODIES = [[1, 2], "x", 5, {"reason": {"a": 1}, "caption": [1], "note": 5, "status": None, "name": 1e308}]


def test_a_json_body_on_any_form_route_is_refused_and_changes_nothing(app, world, crashes):
    from tests.transfer.sheets import table_rows

    people, ids = world
    browsers = {role: SignedIn(app.test_client(), people[role]) for role in ("agent", "inspector", "admin")}
    before, failures = table_rows(), []
    routes = sorted({re.sub(r"<(?:[a-z]+:)?(\w+)>", lambda m: ids.get(m.group(1), m.group(0)), rule.rule)
                     for rule in app.url_map.iter_rules() if "POST" in rule.methods
                     and not rule.rule.startswith("/sync") and set(rule.arguments) <= set(ids)})
    assert len(routes) > 40
    for role, browser in browsers.items():
        for url in routes:
            if url.endswith("/logout"):
                continue
            for body in JSON_BODIES:
                answer = browser.client.post(url, data=json.dumps(body), content_type="application/json",
                                             headers={"X-CSRFToken": browser.token})
                if answer.status_code != 415 and answer.status_code not in (403, 404, 405):
                    failures.append((role, UUID.sub("<id>", url), answer.status_code))
    assert failures == [] and crashes == [], (failures[:10], crashes[:3])
    assert table_rows() == before


@pytest.mark.parametrize("revision", ["²", "9" * 30, "99999999999"])
def test_a_background_save_with_a_revision_no_page_gives_is_kept_not_a_500(app, world, signed_in, crashes,
                                                                            revision):
    from tests.inspections.report_helpers import report_form

    people, ids = world
    browser = signed_in(people["inspector"])
    url = f"/inspections/{ids['inspection_id']}"
    values = report_form(browser.get(url).text)[0] | {"notes": "Typed in the field", "revision": revision}
    values.pop("idempotency_key", None)
    answer = browser.client.post(url, data={**values, "csrf_token": browser.token}, headers={"X-Autosave": "1"})
    assert answer.status_code in (204, 422) and crashes == [], (answer.status_code, crashes)
