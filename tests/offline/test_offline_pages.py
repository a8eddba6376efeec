"""The server side of "available offline": the list of pages to hold, and the offline inspection form."""
from __future__ import annotations

import re
import shutil

from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction, Inspection
from inspect_app.types import utcnow


def test_the_pages_to_hold_are_the_inspectors_own_permits_with_a_form_per_type(make, signed_in, client):
    inspector = make.user("inspector")
    mine = make.permit(inspectors=[inspector])
    others = make.permit(inspectors=[make.user("inspector")])
    listed = signed_in(inspector).get("/offline/pages.json").get_json()

    assert [p["id"] for p in listed["permits"]] == [mine.id]
    urls = listed["permits"][0]["urls"]
    assert urls[0] == f"/permits/{mine.id}"
    assert f"/permits/{mine.id}/inspections/new/erosion_control" in urls
    assert not any(others.id in u for u in urls)
    assert {"/outbox", "/offline/", "/permits/"} <= set(listed["common"])
    # My day too: its Start buttons lead, offline, to the held new reports above.
    assert "/dashboard/my-day" in listed["common"]


def test_signed_out_the_list_is_a_401_not_a_login_page(client):
    response = client.get("/offline/pages.json")
    assert response.status_code == 401 and response.get_json()["error"]


def test_the_offline_form_has_the_checklist_and_makes_no_server_row(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"])
    page = signed_in(inspector).get(f"/permits/{permit.id}/inspections/new/erosion_control")
    assert page.status_code == 200
    assert 'name="answer-perimeter_controls-site"' in page.text
    assert 'accept="image/*" capture="environment"' in page.text and "data-signature-pad" in page.text
    assert db.session.scalar(select(func.count()).select_from(Inspection)) == 0


def test_the_offline_form_is_refused_to_those_who_may_not_perform_it(make, signed_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    outsider = signed_in(make.user("inspector"))
    assert outsider.get(f"/permits/{permit.id}/inspections/new/erosion_control").status_code == 404
    agent = signed_in(make.user("agent"))
    assert agent.get(f"/permits/{permit.id}/inspections/new/erosion_control").status_code == 403
    assert signed_in(inspector).get(f"/permits/{permit.id}/inspections/new/bulldozing").status_code == 404


def test_a_permittee_holds_the_om_pages_of_their_own_permits_and_their_home(make, signed_in):
    owner = make.user("permittee")
    mine = make.permit(owner=owner)
    others = make.permit(owner=make.user("permittee"))
    listed = signed_in(owner).get("/offline/pages.json").get_json()

    assert [p["id"] for p in listed["permits"]] == [mine.id]
    urls = listed["permits"][0]["urls"]
    assert urls[0] == f"/permits/{mine.id}"
    assert {f"/permits/{mine.id}/om", f"/permits/{mine.id}/om/log", f"/permits/{mine.id}/om/certify"} <= set(urls)
    assert not any("/offline/permits/" in u for u in urls)  # a permittee makes no inspection reports
    assert not any(others.id in u for u in urls)
    assert "/my-permits" in listed["common"]


def test_an_agent_holds_the_om_plan_but_not_the_owners_log_and_certify_forms(make, signed_in):
    agent = make.user("agent")
    permit = make.permit(owner=make.user("permittee"))
    listed = signed_in(agent).get("/offline/pages.json").get_json()
    urls = next(p["urls"] for p in listed["permits"] if p["id"] == permit.id)
    assert f"/permits/{permit.id}/om" in urls
    assert f"/permits/{permit.id}/om/log" not in urls and f"/permits/{permit.id}/om/certify" not in urls
    assert "/my-permits" not in listed["common"] and "/dashboard/my-day" not in listed["common"]


def test_a_release_that_changes_a_shell_file_changes_the_worker(app, client, tmp_path):
    shutil.copytree(app.static_folder, tmp_path / "static")
    app.static_folder = str(tmp_path / "static")
    first = client.get("/sw.js").text
    version = re.search(r'^const VERSION = "([0-9a-f]{16})";$', first, re.MULTILINE)
    assert version, "the worker is served with a digest for its version"
    assert client.get("/sw.js").text == first  # the same files, the same worker
    (tmp_path / "static" / "formstore.js").write_text("// a new release\n", encoding="utf-8")
    changed = client.get("/sw.js").text
    assert changed != first and version.group(1) not in changed


def test_the_reports_of_open_corrective_actions_are_held_and_no_others(make, signed_in):
    inspector = make.user("inspector")
    mine, others = make.permit(inspectors=[inspector]), make.permit(inspectors=[inspector])
    open_report, done_report = make.inspection(mine), make.inspection(mine)
    for report, status in ((open_report, "open"), (done_report, "verified")):
        finding = make.finding(mine, report)
        db.session.add(CorrectiveAction(finding_id=finding.id, permit_id=mine.id, kind="routine_maintenance",
                                        description="Reset the fence", owner_name="Contractor", status=status,
                                        discovered_at=utcnow(), due_at=utcnow()))
    db.session.commit()
    listed = {p["id"]: p["urls"] for p in signed_in(inspector).get("/offline/pages.json").get_json()["permits"]}
    assert f"/inspections/{open_report.id}" in listed[mine.id]
    assert f"/inspections/{done_report.id}" not in listed[mine.id]
    assert not any(u.startswith("/inspections/") for u in listed[others.id])


def test_the_worker_waits_for_the_server_as_long_as_the_app_says(app, client):
    assert "const NETWORK_TIMEOUT_MS = 60000;" in client.get("/sw.js").text  # tests/conftest.py
    app.config["OFFLINE_SERVER_TIMEOUT_MS"] = None
    assert "const NETWORK_TIMEOUT_MS = 4000;" in client.get("/sw.js").text  # its own, unless the app says
