"""The people of bench/load.py, for locust: inspectors, agents and field devices, with think time.

Run by bench/load.py in a locust process of its own (`locust -f bench/locustfile.py --headless ...`);
it needs two environment variables that bench/load.py sets:

  LOAD_TOWN    a JSON file: the accounts, permits, reports and device tokens of the town it built
  LOAD_RECORD  where to write every request (start time, page name, milliseconds, failed, and what went
               wrong: the exception's class and message, or None) at the end

Every user signs in once (the request named "login", which bench/load.py reports apart: people sign in
once a day, not once a minute) and then waits 0.5 to 1.5 s between actions. Nothing here imports the
app: the load generator only talks HTTP, like a browser or a tablet. The users are FastHttpUsers
(geventhttpclient, not requests): the load generator shares the machine's cores with the app and its
database, so the CPU it spends per request is taken from the app's.
"""
from __future__ import annotations

import datetime as dt
import itertools
import json
import os
import random
import re
import time
import uuid
from pathlib import Path

from locust import between, events, task
from locust.contrib.fasthttp import FastHttpUser

TOWN = json.loads(Path(os.environ["LOAD_TOWN"]).read_text())
RECORD = os.environ["LOAD_RECORD"]
_CSRF = re.compile(r'name="csrf-token" content="([^"]+)"|name="csrf_token"[^>]*value="([^"]+)"')
_ANSWER = re.compile(r'name="(answer-[^"]+)"')
_records: list[tuple[float, str, float, bool, str | None]] = []


@events.request.add_listener
def _record(request_type, name, response_time, response_length, exception=None, start_time=None, **_):
    started = start_time if start_time is not None else time.time() - response_time / 1000
    error = None if exception is None else f"{type(exception).__name__}: {exception}"[:200]
    _records.append((started, name, response_time, exception is not None, error))


@events.quitting.add_listener
def _write_record(**_):
    Path(RECORD).write_text(json.dumps(_records))


def _csrf(html: str) -> str:
    found = _CSRF.search(html)
    if found is None:
        raise RuntimeError("no CSRF token on the page")
    return found.group(1) or found.group(2)


def _status(answer) -> str:
    """The answer's status, or what stopped it (status 0: the connection failed, and why)."""
    return str(answer.status_code) if answer.status_code else f"no answer: {getattr(answer, 'error', None)!r}"


class _Person(FastHttpUser):
    abstract = True
    wait_time = between(0.5, 1.5)
    accounts: list[dict] = []
    _turn = itertools.count()

    def on_start(self) -> None:
        self.account = self.accounts[next(self._turn) % len(self.accounts)]
        page = self.client.get("/login", name="login")
        with self.client.post("/login", name="login", allow_redirects=False, catch_response=True,
                              data={"email": self.account["email"], "password": TOWN["password"],
                                    "csrf_token": _csrf(page.text)}) as answer:
            if answer.status_code != 303:  # counted in load_errors, then this user stops
                answer.failure(f"sign-in answered {_status(answer)}")
        if answer.status_code != 303:
            raise RuntimeError(f"sign-in of {self.account['email']} answered {answer.status_code}")
        self.token = _csrf(self.client.get("/permits/", name="permits list").text)

    def page(self, path: str, name: str, expect: str | None = None) -> str:
        with self.client.get(path, name=name, catch_response=True) as answer:
            if answer.status_code != 200:
                answer.failure(_status(answer))
            elif expect and expect not in answer.text:
                answer.failure(f"{expect!r} not on the page")
            return answer.text


class Inspector(_Person):
    """Opens permit pages and reports, starts reports and saves drafts of them."""

    fixed_count = 38
    accounts = TOWN["inspectors"]

    def on_start(self) -> None:
        super().on_start()
        self.drafts: list[str] = []

    @task(6)
    def permit_page(self) -> None:
        permit = random.choice(self.account["permits"])
        self.page(f"/permits/{permit}", "permit page", "Inspections")
        # What the browser then asks for (hx-trigger="load"), with htmx's headers: the chart's fragment.
        self.client.get(f"/permits/{permit}/rainfall", name="rainfall chart",
                        headers={"HX-Request": "true", "HX-Target": "rainfall"})

    @task(4)
    def report_page(self) -> None:
        self.page(f"/inspections/{random.choice(self.account['reports'])}", "report page")

    @task(1)
    def start_report(self) -> None:
        if len(self.drafts) >= 3:  # an inspector works on a few reports a day, not dozens
            return self.save_draft()
        permit = random.choice(self.account["permits"])
        with self.client.post(f"/permits/{permit}/inspections", name="start inspection", allow_redirects=False,
                              data={"type": "erosion_control", "csrf_token": self.token},
                              catch_response=True) as answer:
            if answer.status_code != 303:
                answer.failure(_status(answer))
                return None
            self.drafts.append(answer.headers["Location"].rsplit("/", 1)[-1])
        self.page(f"/inspections/{self.drafts[-1]}", "draft page", "Save draft")
        return None

    @task(3)
    def save_draft(self) -> None:
        if not self.drafts:
            return self.start_report()
        draft = random.choice(self.drafts)
        html = self.page(f"/inspections/{draft}", "draft page", "Save draft")
        form = {name: random.choice(("yes", "yes", "yes", "no", "na")) for name in set(_ANSWER.findall(html))}
        form |= {"csrf_token": self.token, "evaluation": "compliant",
                 "notes": f"Silt fence intact along the frontage; checked {dt.datetime.now():%H:%M:%S}.",
                 "performed_at": dt.datetime.now().strftime("%Y-%m-%dT%H:%M")}
        with self.client.post(f"/inspections/{draft}", name="save draft", data=form, allow_redirects=False,
                              catch_response=True) as answer:
            if answer.status_code != 303:
                answer.failure(_status(answer))
        return None


class Agent(_Person):
    """A town's agent: the dashboard, and the permit pages and reports it leads to."""

    fixed_count = 6
    accounts = TOWN["agents"]

    @task(4)
    def dashboard(self) -> None:
        self.page("/dashboard/", "dashboard", "What is due and what is late")

    @task(2)
    def permit_page(self) -> None:
        self.page(f"/permits/{random.choice(self.account['permits'])}", "permit page", "Inspections")

    @task(1)
    def report_page(self) -> None:
        self.page(f"/inspections/{random.choice(self.account['reports'])}", "report page")


class Device(FastHttpUser):
    """A tablet syncing: pushes area status changes made offline, and pulls the changes of others."""

    fixed_count = 6
    wait_time = between(0.5, 1.5)
    _turn = itertools.count()

    def on_start(self) -> None:
        self.device = TOWN["devices"][next(self._turn) % len(TOWN["devices"])]
        self.client.auth_header = f"Bearer {self.device['token']}"  # sent with every request
        self.revisions = {area: 1 for area in self.device["areas"]}
        self.cursor = 0
        self.steps = itertools.cycle(("activity_ceased", "stabilization_initiated"))

    @task(1)
    def push(self) -> None:
        status, now = next(self.steps), dt.datetime.now(dt.UTC)
        areas = random.sample(list(self.revisions), 10)
        ops = [{"op_id": str(uuid.uuid4()), "kind": "area.status", "record_id": area,
                "base_revision": self.revisions[area], "device_time": now.isoformat(),
                "payload": {"status": status, "at": (now - dt.timedelta(seconds=1)).isoformat()}}
               for area in areas]
        body = {"ops": ops, "sent_at": dt.datetime.now(dt.UTC).isoformat()}
        with self.client.post("/sync/push", json=body, name="sync push", catch_response=True) as answer:
            if answer.status_code != 200:
                answer.failure(_status(answer))
                return
            results = answer.json()["results"]
            for area, result in zip(areas, results, strict=True):
                if result["status"] == "applied":
                    self.revisions[area] = result["revision"]
                elif result["status"] == "conflict":  # no other device edits these areas: a bug
                    self.revisions[area] = result["server"].get("revision", self.revisions[area])
            if any(r["status"] != "applied" for r in results):
                answer.failure(f"not applied: {[r for r in results if r['status'] != 'applied'][:1]}")

    @task(1)
    def pull(self) -> None:
        with self.client.get(f"/sync/changes?cursor={self.cursor}", name="sync pull", catch_response=True) as answer:
            if answer.status_code != 200:
                answer.failure(_status(answer))
                return
            self.cursor = answer.json()["cursor"]
