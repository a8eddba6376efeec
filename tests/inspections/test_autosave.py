"""Save as you go, on the server's side (issue 31): the report page posts its draft in the background (the header
X-Autosave, static/autosave.js), and is answered only whether it was kept. A background save is its author's act like
any post: refused while someone else is signed in, and a refused one keeps nothing."""
from __future__ import annotations

from sqlalchemy import select

from factories import SignedIn
from inspect_app.extensions import db
from inspect_app.inspections.models import ChecklistAnswer, CorrectiveAction, Finding, Inspection
from tests.inspections.report_helpers import report_form, start

BACKGROUND = {"X-Autosave": "1"}


def background_save(client, inspection_id: str, **fields):
    """What static/autosave.js posts: the form as it stands, without its idempotency key."""
    page = client.get(f"/inspections/{inspection_id}").text
    values = report_form(page)[0] | fields
    values.pop("idempotency_key", None)
    return client.client.post(f"/inspections/{inspection_id}", data={"csrf_token": client.token, **values},
                              headers=BACKGROUND)


def answers(inspection_id: str) -> dict[str, str]:
    db.session.expire_all()
    return {a.item_key: a.answer for a in db.session.scalars(
        select(ChecklistAnswer).where(ChecklistAnswer.inspection_id == inspection_id))}


def test_a_background_save_keeps_the_draft_and_answers_with_no_page(make, signed_in, weather_offline):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    client = signed_in(inspector)
    draft = start(client, permit, "erosion_control")

    response = background_save(client, draft.id, **{"answer-perimeter_controls-site": "no",
                                                    "note-perimeter_controls-site": "Gap at the gate."})

    assert response.status_code == 204 and response.data == b""
    assert answers(draft.id)["perimeter_controls"] == "no"
    kept = db.session.get(Inspection, draft.id)
    assert not kept.is_blank and kept.status == "draft"  # kept: it owes its report now


def test_a_refused_background_save_says_which_fields_and_keeps_nothing(make, signed_in, weather_offline):
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    client = signed_in(inspector)
    draft = start(client, permit, "erosion_control")

    response = background_save(client, draft.id, **{"answer-perimeter_controls-site": "no",
                                                    "performed_at": "not a time"})

    assert response.status_code == 422 and response.json["kept"] is False
    assert "performed_at" in response.json["refused"]
    assert answers(draft.id) == {}
    assert db.session.get(Inspection, draft.id).is_blank


def test_a_background_save_from_a_page_left_open_by_someone_else_is_refused(app, make, signed_in, weather_offline):
    """A shared tablet: the first inspector's page is still open after the second signed in. Its background save
    names the first (posted_by) and is refused; nothing is kept under the second inspector's name."""
    first, second = make.user("inspector"), make.user("inspector")
    permit = make.permit(inspectors=[first, second])
    browser = SignedIn(app.test_client(), first)
    draft = start(browser, permit, "erosion_control")
    page = browser.get(f"/inspections/{draft.id}").text
    values = report_form(page)[0] | {"answer-perimeter_controls-site": "no"}
    values.pop("idempotency_key", None)

    browser.post("/logout")
    SignedIn(browser.client, second)
    # The page's own token and its author, as the page left open posts them.
    response = browser.client.post(f"/inspections/{draft.id}", data={**values, "csrf_token": browser.token},
                                   headers=BACKGROUND)

    assert response.status_code == 401
    assert answers(draft.id) == {}


def _with_fix(client, draft_id: str) -> dict:
    """The draft's form with one CGP 5.1 condition answered "no" and its fix typed in full (its action left at
    "open a new one", as the page shows until it is loaded again)."""
    page = client.get(f"/inspections/{draft_id}").text
    values = report_form(page)[0]
    values.pop("idempotency_key", None)
    key = "meets_water_quality-site"
    values.update({f"answer-{key}": "no", f"fix-{key}-repair": "Silt fence down by the gate",
                   f"fix-{key}-first_observed": "2026-12-04", f"fix-{key}-kind": "routine_maintenance",
                   f"fix-{key}-owner_name": "Site crew"})
    return values


def test_background_saves_of_a_fix_open_its_corrective_action_once(make, signed_in, weather_offline):
    """A fix complete in the first background save opens its finding and action; the page is not loaded again, so
    each later save still offers "open a new one": none opens a second, nor does Save draft after them."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    client = signed_in(inspector)
    draft = start(client, permit, "erosion_control")
    values = _with_fix(client, draft.id)

    for other in ("perimeter_controls", "natural_buffers", "slopes_protected"):
        values[f"answer-{other}-site"] = "yes"
        answer = client.client.post(f"/inspections/{draft.id}", data={"csrf_token": client.token, **values},
                                    headers=BACKGROUND)
        assert answer.status_code == 204, answer.text
        values["revision"] = answer.headers["Draft-Revision"]  # as the page takes it (static/autosave.js)
    assert client.post(f"/inspections/{draft.id}", values).status_code == 303  # Save draft, same page

    db.session.expire_all()
    findings = db.session.scalars(select(Finding).where(Finding.inspection_id == draft.id)).all()
    actions = db.session.scalars(select(CorrectiveAction).where(CorrectiveAction.permit_id == permit.id)).all()
    assert len(findings) == 1 and len(actions) == 1
    assert db.session.get(Inspection, draft.id).details["fixes"]["meets_water_quality-site"]["action_id"] \
        == actions[0].id


def test_a_background_save_never_makes_a_report(make, signed_in, weather_offline):
    """Not one a device made and has not sent (its first Save or Submit makes it), nor one discarded since."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    client = signed_in(inspector)
    page = client.get(f"/permits/{permit.id}/inspections/new/erosion_control").text
    values = report_form(page)[0] | {"notes": "Typed on the device."}
    values.pop("idempotency_key", None)
    device_made = "7b0c2f7e-3a51-4d7e-9c1a-52f1d0a3b9e4"
    assert client.client.post(f"/inspections/{device_made}", data={"csrf_token": client.token, **values},
                              headers=BACKGROUND).status_code == 404
    assert db.session.get(Inspection, device_made) is None

    draft_id = start(client, permit, "erosion_control").id
    stale = client.get(f"/inspections/{draft_id}").text
    assert client.post(f"/inspections/{draft_id}/discard", {"confirm": "yes"}).status_code == 303
    values = report_form(stale)[0] | {"notes": "From the tab left open."}
    values.pop("idempotency_key", None)
    assert client.client.post(f"/inspections/{draft_id}", data={"csrf_token": client.token, **values},
                              headers=BACKGROUND).status_code == 404
    db.session.expire_all()
    assert db.session.get(Inspection, draft_id) is None


def test_a_background_save_from_a_page_older_than_the_drafts_last_save_is_refused_not_kept_over_it(
        make, signed_in, weather_offline):
    """The same draft open in two tabs: each posted its whole form in the background, so tab 2 (opened first) undid
    the notes tab 1 had saved, and both said "Saved". Each save moves the draft's revision on; a background save
    from a page made before the last save is refused (409) and keeps nothing. Save draft, tapped, is kept: the
    inspector keeps what they see."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector])
    client = signed_in(inspector)
    draft = start(client, permit, "erosion_control")
    first, second = (report_form(client.get(f"/inspections/{draft.id}").text)[0] for _ in range(2))
    for values in (first, second):
        values.pop("idempotency_key", None)

    saved = client.client.post(f"/inspections/{draft.id}", headers=BACKGROUND,
                               data={"csrf_token": client.token, **first, "notes": "North gate locked."})
    assert saved.status_code == 204 and saved.headers["Draft-Revision"] == str(int(first["revision"]) + 1)
    stale = client.client.post(f"/inspections/{draft.id}", headers=BACKGROUND,
                               data={"csrf_token": client.token, **second, "observed_weather": "Overcast"})
    assert stale.status_code == 409 and stale.get_json() == {"kept": False, "stale": True}
    db.session.expire_all()
    stored = db.session.get(Inspection, draft.id)
    assert stored.notes == "North gate locked." and not stored.observed_weather

    # The first page goes on with the revision it was answered with; the second, tapped Save draft, is kept.
    again = client.client.post(f"/inspections/{draft.id}", headers=BACKGROUND,
                               data={"csrf_token": client.token, **first, "revision": saved.headers["Draft-Revision"],
                                     "notes": "North gate locked; walked in."})
    assert again.status_code == 204
    assert client.post(f"/inspections/{draft.id}", {**second, "observed_weather": "Overcast"}).status_code == 303
    db.session.expire_all()
    assert db.session.get(Inspection, draft.id).observed_weather == "Overcast"
