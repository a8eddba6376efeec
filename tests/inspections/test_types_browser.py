"""Each inspection type other than erosion control, on a tablet in a real headless Chromium: start it from
the permit page, fill the type's own part and the checklist, evaluate, sign with a finger (pointer
events) and submit; the submitted report shows every item (a)-(h) of §380-16 C(4)(f)[1]."""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import Inspection, PipeVideo, PunchListItem
from inspect_app.inspections import queries, services
from inspect_app.permits import services as permits
from inspect_app.templating import local_time
from inspect_app.types import LOCAL_TZ, utcnow
from tests.builders import signature_data_url
from tests.inspections.report_helpers import OBSERVED_WEATHER

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("weather_offline")]

GPS = {"latitude": 42.050712, "longitude": -72.582934}
FACTS = ("(a) Date and time", "(a) Location", "(b) Inspector and credentials", "(c) Type",
         "(d) Date of last inspection", "(e) Weather at the time", "(f) Precipitation, previous 24 hours",
         "(g) Evaluation", "(h) Steps to correct violations")


# -- what the inspector does on the tablet --------------------------------------------------------

def start_from_permit_page(page, live_server, permit, kind: str, heading: str) -> Inspection:
    """Tap "Start" for `kind` on the permit page, with the device's GPS allowed; returns the draft."""
    page.context.grant_permissions(["geolocation"], origin=live_server.url)
    page.context.set_geolocation(GPS)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    page.click(f"button[data-start={kind}]")
    page.wait_for_selector(f"h1:has-text('{heading}')")
    page.wait_for_load_state()  # its scripts have run: the signature pad and the "Add" buttons answer
    return db.session.get(Inspection, page.url.rsplit("/", 1)[-1])


def answer_checklist(page, answer: str = "yes") -> int:
    """Answer every checklist item for every subject; returns how many were answered."""
    radios = page.locator(f"#checklist input[type=radio][value={answer}]").all()
    for radio in radios:
        radio.check()
    return len(radios)


def sign(page) -> None:
    """Draw a signature on the pad with the pointer, as a finger would."""
    pad = page.locator("#signature-canvas")
    pad.scroll_into_view_if_needed()
    box = pad.bounding_box()
    page.mouse.move(box["x"] + 30, box["y"] + 110)
    page.mouse.down()
    for x, y in ((80, 50), (140, 120), (210, 45), (290, 115)):
        page.mouse.move(box["x"] + x, box["y"] + y, steps=4)
    page.mouse.up()
    assert page.input_value("input[name=signature]").startswith("data:image/png;base64,")


def evaluate_sign_and_submit(page, evaluation: str = "compliant", steps: str | None = None) -> None:
    """(g) and (h), the signature, then "Sign and submit"; waits for the submitted report."""
    page.check(f"#evaluation-{evaluation}")
    if steps:
        page.fill("#corrective_steps", steps)
    page.fill("#observed_weather", OBSERVED_WEATHER)  # (e) the station's weather is pending
    sign(page)
    page.click("#submit-report")
    page.wait_for_selector("#report-status:has-text('Submitted')")


def facts(page) -> dict[str, str]:
    """The submitted report's facts as shown: label → value."""
    return dict(page.evaluate("""() => Array.from(document.querySelectorAll('#report-facts dt'))
        .map(dt => [dt.textContent.trim(), dt.nextElementSibling.textContent.replace(/\\s+/g, ' ').trim()])"""))


def assert_report_a_to_h(page, report: Inspection, type_name: str, last: str = "None before this one") -> None:
    """Every item (a)-(h) on the page with the stored report's values, and the report stored as submitted."""
    shown = facts(page)
    assert [label for label in FACTS if not shown.get(label)] == []
    assert shown["(a) Date and time"] == local_time(report.performed_at)
    assert shown["(a) Location"].startswith("42.05071, -72.58293 (device GPS")
    assert shown["(b) Inspector and credentials"] == f"{report.inspector_name}, {report.inspector_credentials}"
    assert shown["(c) Type"].startswith(type_name)
    assert shown["(d) Date of last inspection"] == last
    # The weather service is unreachable: the inspector's observation, the station's pending beside it.
    assert shown["(e) Weather at the time"].startswith(
        f"Observed by the inspector: {OBSERVED_WEATHER} Station: Pending")
    assert shown["(g) Evaluation"].startswith({"compliant": "In compliance", "violations": "Violations"}[report.evaluation])
    assert shown["(h) Steps to correct violations"] == (report.corrective_steps or "—")
    assert report.status == "submitted" and report.signature_sha256 and report.record_sha256
    # Loaded (a broken image is complete too, with no width): the signature shows, not a broken picture.
    page.wait_for_function("() => document.querySelector('#signature-image').complete")
    assert page.evaluate("document.querySelector('#signature-image').naturalWidth") > 0
    expected = sum(len(found) for _, found in queries.checklist(report, report.details))
    assert len(report.answers) == expected > 0


def submitted(inspection: Inspection) -> Inspection:
    db.session.expire_all()
    return db.session.get(Inspection, inspection.id)


# -- the tests, one per type ----------------------------------------------------------------------

def test_an_initial_site_inspection_records_existing_conditions(make, live_server, page, sign_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    sign_in(page, inspector)
    draft = start_from_permit_page(page, live_server, permit, "initial", "Initial site inspection")

    page.fill("#existing_conditions", "Wooded lot, grades as on the existing-conditions plan")
    page.fill("#resource_areas", "BVW flagged along the east line, flags A1-A14 in place")
    page.fill("#test_pits", "TP-1 and TP-2 at the infiltration system, staked")
    assert answer_checklist(page) == 5
    evaluate_sign_and_submit(page)

    report = submitted(draft)
    assert_report_a_to_h(page, report, "Initial site inspection")
    assert report.details["resource_areas"] == "BVW flagged along the east line, flags A1-A14 in place"
    part = page.inner_text("#initial-part")
    assert "Wooded lot, grades as on the existing-conditions plan" in part and "TP-1 and TP-2" in part


def test_a_pre_bury_inspection_answers_per_structure_whether_it_is_as_designed(make, live_server, page, sign_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    system = permits.add_structure(None, permit, name="Infiltration system IS-1", kind="infiltration",
                                   is_underground=True, design_size="40 ft x 12 ft", design_invert="EL 182.50",
                                   material="HDPE chambers", groundwater_separation_ft=Decimal("3.00"))
    pipe = permits.add_structure(None, permit, name="Pipe run P-1", kind="pipe", is_underground=True,
                                 design_size="12 in", material="HDPE")
    db.session.commit()
    sign_in(page, inspector)
    draft = start_from_permit_page(page, live_server, permit, "pre_bury", "Pre-bury inspection")

    # Both structures are open for inspection; one is as designed, the other is not.
    assert page.is_checked(f"#pb-{system.id}-covered") and page.is_checked(f"#pb-{pipe.id}-covered")
    page.check(f"#pb-{system.id}-as_designed-yes")
    page.fill(f"#pb-{system.id}-size", "40 ft x 12 ft")
    page.fill(f"#pb-{system.id}-invert", "EL 182.50")
    page.fill(f"#pb-{system.id}-material", "HDPE chambers")
    page.fill(f"#pb-{system.id}-separation_ft", "3.2")
    page.check(f"#pb-{pipe.id}-as_designed-no")
    page.fill(f"#pb-{pipe.id}-size", "10 in")
    assert answer_checklist(page) == 12  # six items for each of the two structures
    page.check(f"#answer-size_as_designed-{pipe.id}-no")
    evaluate_sign_and_submit(page, "violations", "Replace P-1 with the 12 in pipe of the plan before backfill.")

    report = submitted(draft)
    assert_report_a_to_h(page, report, "Pre-bury inspection")
    parts = report.details["structures"]
    assert (parts[system.id]["as_designed"], parts[system.id]["groundwater_separation_ft"]) == ("yes", 3.2)
    assert (parts[pipe.id]["as_designed"], parts[pipe.id]["size"]) == ("no", "10 in")
    assert "Infiltration system IS-1: as designed" in page.inner_text(f"#pb-{system.id}")
    shown = page.inner_text(f"#pb-{pipe.id}")
    assert "Pipe run P-1: NOT as designed" in shown and "10 in (designed 12 in)" in shown


def test_a_walk_through_makes_the_punch_list(make, live_server, page, sign_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    sign_in(page, inspector)
    draft = start_from_permit_page(page, live_server, permit, "walk_through", "Walk-through inspection")

    for item in ("Loam and seed the swale at Lot 2", "Clean the catch basin sumps on Elm Road"):
        page.click("#add-new-punch")  # a repeatable part of the report form, posted with it
        page.locator("[data-list-of=punch-template] input[name$=-description]").last.fill(item)
    answer_checklist(page)
    evaluate_sign_and_submit(page)

    report = submitted(draft)
    assert_report_a_to_h(page, report, "Walk-through inspection")
    items = db.session.scalars(select(PunchListItem.description).where(PunchListItem.walk_through_id == report.id))
    assert sorted(items) == ["Clean the catch basin sumps on Elm Road", "Loam and seed the swale at Lot 2"]
    assert "Loam and seed the swale at Lot 2" in page.inner_text("#punch-list")
    assert page.locator("#punch-list form").count() == 0  # a submitted punch list cannot be edited


def _submitted_walk_through(inspector, permit, *items: str) -> Inspection:
    """An earlier walk-through, made and submitted through the services, with its punch list."""
    walk = services.start_inspection(inspector, permit, "walk_through", now=utcnow() - dt.timedelta(days=3))
    db.session.flush()
    for item in items:
        findings.add_punch_item(inspector, walk, item)
    answers = {(item.key, s.id): ("yes", None) for item, found in queries.checklist(walk, {}) for s in found}
    data = services.values_of(walk)
    data.answers, data.evaluation = answers, "compliant"
    data.observed_weather = OBSERVED_WEATHER  # (e) the station's weather is pending
    data.signature_png = services.signature_png(signature_data_url())
    services.submit(inspector, walk, data)
    db.session.commit()
    return walk


def test_a_final_inspection_resolves_the_punch_list_and_records_videos_storm_and_certification(
        make, live_server, page, sign_in):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], structures=["Pipe run P-1", "Pipe run P-2"])
    pipes = sorted(queries.pipe_runs(permit), key=lambda s: s.name)
    walk = _submitted_walk_through(inspector, permit, "Loam and seed the swale", "Reset the outlet riprap")
    punch = {p.description: p for p in queries.open_punch_items(permit)}
    sign_in(page, inspector)
    draft = start_from_permit_page(page, live_server, permit, "final", "Final inspection")

    page.fill(f"#punch-{punch['Loam and seed the swale'].id}", "Seeded June 20; grass established.")
    page.fill(f"#punch-{punch['Reset the outlet riprap'].id}", "Riprap reset and keyed in.")
    yesterday = (utcnow().astimezone(LOCAL_TZ).date() - dt.timedelta(days=1)).isoformat()
    for n, pipe in enumerate(pipes, start=1):
        page.fill(f"#video-{pipe.id}-recorded_on", yesterday)
        page.fill(f"#video-{pipe.id}-reference", f"CCTV run {n}, contractor's report 2026-11{n}")
    page.fill("#storm_date", yesterday)
    page.fill("#storm_depth_in", "1.10")
    page.check("#certified")
    answer_checklist(page)
    evaluate_sign_and_submit(page)

    report = submitted(draft)
    assert_report_a_to_h(page, report, "Final inspection", last=local_time(walk.performed_at))
    resolved = {p.description: (p.resolved_in_id, p.resolution) for p in db.session.scalars(select(PunchListItem))}
    assert resolved == {"Loam and seed the swale": (report.id, "Seeded June 20; grass established."),
                        "Reset the outlet riprap": (report.id, "Riprap reset and keyed in.")}
    videos = {v.structure_id: v for v in db.session.scalars(select(PipeVideo).where(PipeVideo.inspection_id == report.id))}
    assert [videos[p.id].reference for p in pipes] == ["CCTV run 1, contractor's report 2026-111",
                                                        "CCTV run 2, contractor's report 2026-112"]
    assert {v.recorded_on.isoformat() for v in videos.values()} == {yesterday}
    assert report.details["storm"] == {"date": yesterday, "depth_mm": 27.94}
    assert report.details["certification"]["certified"] is True
    assert "Riprap reset and keyed in." in page.inner_text("#resolved-punch")
    assert page.inner_text("#storm") == f"Storm of {yesterday}: 1.10 in"
    assert page.inner_text("#certification").startswith("Certified: I find the stormwater management system")
    assert "CCTV run 2, contractor's report 2026-112" in page.inner_text(f"#video-{pipes[1].id}")


def test_a_periodic_inspection_by_the_agent_with_an_on_site_gauge_reading(make, live_server, page, sign_in):
    make.user("inspector")
    # The credentials a report prints are the account's (SPEC *Signatures*), never typed on the report.
    agent = make.user("agent", certification="Conservation Agent, Town of Longmeadow")
    permit = make.permit()
    sign_in(page, agent)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    # §380-16 C(4)(f): the agent may do periodic inspections only; the five scheduled ones are the engineer's.
    assert page.locator("#start-inspection button").all_inner_texts() == ["Start: Periodic inspection"]
    draft = start_from_permit_page(page, live_server, permit, "periodic", "Periodic inspection")

    page.fill("#gauge_precip_in", "0.50")
    assert answer_checklist(page) == 2
    evaluate_sign_and_submit(page)

    report = submitted(draft)
    assert_report_a_to_h(page, report, "Periodic inspection")
    assert (report.inspector_id, report.gauge_precip_mm, report.weather_status) == (agent.id, 12.7, "gauge")
    assert facts(page)["(f) Precipitation, previous 24 hours"].startswith("0.50 in, on-site rain gauge")
    assert page.inner_text("#signed-by").startswith(f"Signed by {agent.name}, Conservation Agent, Town of Longmeadow")
