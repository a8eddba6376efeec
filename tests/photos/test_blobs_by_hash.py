"""Files named by their SHA-256 (issue 29, finding 2). Every web form and sync operation that names a stored
file by its hash asks one rule (`usable_blob`): the file is stored, and the sender uploaded it or sees a record
that names it. Naming someone else's file (a photo of another user's draft report on another permit) copies
nothing and does not make the file the sender's, and it is answered exactly as a hash never stored is, so no
form tells whether a file is stored."""
from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import func, select

from factories import SignedIn
from inspect_app.accounts.models import User
from inspect_app.certifications.models import MaintenanceLogEntry
from inspect_app.extensions import db
from inspect_app.findings import services as findings
from inspect_app.inspections.models import CorrectiveAction, PipeVideo
from inspect_app.permits import services as permits
from inspect_app.photos.models import Photo
from inspect_app.photos.services import store_photo
from inspect_app.types import LOCAL_TZ, new_id, utcnow
from sync.client import new_op
from tests.builders import jpeg
from tests.inspections.report_helpers import start
from tests.offline.offline_helpers import sha256

NOT_UPLOADED = "A photo did not finish uploading from the device; send the form again."
NO_VIDEO = "No uploaded file has that SHA-256; upload the video first or give a reference."
UNKNOWN = sha256(b"bytes nobody ever uploaded")


@pytest.fixture(autouse=True)
def _weather_kept_offline(weather_offline):
    """The weather service is unreachable: reports keep their weather pending."""


def _browser(app, user) -> SignedIn:
    return SignedIn(app.test_client(), user)


def _upload(browser: SignedIn, data: bytes) -> str:
    """Upload through /sync/blobs as the outbox does (a chunk, then complete), not attached to anything yet."""
    digest = sha256(data)
    put = browser.client.put(f"/sync/blobs/{digest}", data=data, headers={
        "X-CSRFToken": browser.token, "Upload-Offset": "0", "Content-Type": "application/octet-stream"})
    assert put.status_code in (200, 201, 204), put.text
    done = browser.client.post(f"/sync/blobs/{digest}/complete", json={"content_type": "image/jpeg"},
                               headers={"X-CSRFToken": browser.token})
    assert done.status_code == 200, done.text
    return digest


@pytest.fixture
def victims_file(app, make, request):
    """The SHA-256 of a file of Dana's, on her permit: a photo of her draft report, or an upload she has not
    attached to anything yet."""
    dana = make.user("inspector", name="Dana Whitfield")
    theirs = make.permit(inspectors=[dana], construction_started_on=dt.date(2026, 6, 2))
    browser = _browser(app, dana)
    if request.param == "draft photo":
        draft = start(browser, theirs, "erosion_control")
        photo = store_photo(dana, theirs, jpeg(41), caption="East line, before repair", inspection=draft)
        db.session.commit()
        return photo.original_sha256
    return _upload(browser, jpeg(42))


@pytest.fixture
def own(app, make):
    """A permittee and an engineer of another permit (their own), with what each of its forms needs: an open
    corrective action, a draft report and a draft final inspection with a pipe run to film."""
    owner, engineer = make.user("permittee", name="Pat Owner"), make.user("inspector", name="Casey Cole")
    permit = make.permit(owner=owner, inspectors=[engineer], construction_started_on=dt.date(2026, 6, 2))
    pipe = permits.add_structure(None, permit, name="Pipe run P-1", kind="pipe")
    report = make.inspection(permit, evaluation="violations", latitude=42.0501, longitude=-72.5828)
    action = findings.open_action(engineer, make.finding(permit, report), "routine_maintenance",
                                  "Reset the silt fence", owner_name="Pat Owner")
    db.session.commit()
    browser = _browser(app, engineer)
    return {"permit": permit, "owner": _browser(app, owner), "engineer": browser, "pipe": pipe, "action": action,
            "draft": start(browser, permit, "erosion_control"), "final": start(browser, permit, "final")}


def _errors(html: str) -> list[str]:
    """Every message the page shows beside a field or above the form."""
    found = re.findall(r'<(?:p|div)[^>]*class="[^"]*(?:field-error|error-summary)[^"]*"[^>]*>(.*?)</(?:p|div)>',
                       html, re.S)
    return sorted(" ".join(re.sub(r"<[^>]+>", " ", text).split()) for text in found)


def _om_log(own, sha):
    """The issue's attack: an O&M log entry on the permittee's own permit naming the file as a photo."""
    return own["owner"].post(f"/permits/{own['permit'].id}/om/log", {
        "log-kind": "repair", "log-performed_on": utcnow().astimezone(LOCAL_TZ).date().isoformat(),
        "log-description": "Reset the outlet grate", "log-performed_by": "Pat Owner", "photos_sha256": sha})


def _report_photo(own, sha):
    return own["engineer"].post(f"/inspections/{own['draft'].id}", {"notes": "Photos", "photos_sha256": sha})


def _close_out(own, sha):
    action = own["action"]
    return own["engineer"].post(f"/actions/{action.id}/close", {
        f"close-{action.id}-completed_at": utcnow().astimezone(LOCAL_TZ).strftime("%Y-%m-%dT%H:%M"),
        f"close-{action.id}-evidence_photo_sha256": sha})


def _pipe_video(own, sha):
    yesterday = (utcnow().astimezone(LOCAL_TZ).date() - dt.timedelta(days=1)).isoformat()
    key = f"video-{own['pipe'].id}"
    return own["engineer"].post(f"/inspections/{own['final'].id}",
                                {f"{key}-recorded_on": yesterday, f"{key}-blob_sha256": sha})


# (form, how it is posted, what it says of a file not uploaded)
FORMS = [("O&M log entry", _om_log, NOT_UPLOADED), ("report photo", _report_photo, NOT_UPLOADED),
         ("close-out evidence", _close_out, NOT_UPLOADED), ("final's pipe video", _pipe_video, NO_VIDEO)]


def _named_by_own_records(sha: str) -> int:
    db.session.expire_all()
    return (db.session.scalar(select(func.count()).select_from(Photo).where(Photo.original_sha256 == sha))
            + db.session.scalar(select(func.count()).select_from(PipeVideo).where(PipeVideo.blob_sha256 == sha)))


@pytest.mark.parametrize("victims_file", ["draft photo", "upload not attached yet"], indirect=True)
@pytest.mark.parametrize("form, post, message", FORMS, ids=[f[0] for f in FORMS])
def test_a_form_naming_someone_elses_file_is_answered_as_for_no_file_and_copies_nothing(
        form, post, message, victims_file, own):
    named_before = _named_by_own_records(victims_file)
    entries = db.session.scalar(select(func.count()).select_from(MaintenanceLogEntry))

    forbidden, unknown = post(own, victims_file), post(own, UNKNOWN)

    assert forbidden.status_code == unknown.status_code == 422, forbidden.text
    assert _errors(forbidden.text) == _errors(unknown.text)
    assert any(message in shown for shown in _errors(forbidden.text))
    assert _named_by_own_records(victims_file) == named_before  # no copy, no video naming it
    assert db.session.scalar(select(func.count()).select_from(MaintenanceLogEntry)) == entries
    assert db.session.get(CorrectiveAction, own["action"].id).status == "open"
    # The file did not become theirs: the blob endpoint still answers as for no file at all.
    for browser in (own["owner"], own["engineer"]):
        assert browser.client.get(f"/sync/blobs/{victims_file}").status_code == 404


@pytest.mark.parametrize("victims_file", ["draft photo"], indirect=True)
def test_the_sync_operation_waits_alike_for_someone_elses_file_and_for_one_never_sent(victims_file, own):
    def log_with_photo(sha: str) -> dict:
        op = new_op("om.log", new_id(), {"permit_id": own["permit"].id, "kind": "repair",
                                         "performed_on": "2026-06-10", "description": "Reset the outlet grate",
                                         "performed_by": "Pat Owner", "photos": [{"id": new_id(), "sha256": sha}]})
        browser = own["owner"]
        pushed = browser.client.post("/sync/push", json={"sent_at": utcnow().isoformat(), "ops": [op]},
                                     headers={"X-CSRFToken": browser.token})
        assert pushed.status_code == 200, pushed.text
        return pushed.json["results"][0]

    forbidden, unknown = log_with_photo(victims_file), log_with_photo(UNKNOWN)
    assert (forbidden["status"], unknown["status"]) == ("waiting", "waiting")
    assert (forbidden["waiting_for"], unknown["waiting_for"]) == ({"blob": victims_file}, {"blob": UNKNOWN})
    assert _named_by_own_records(victims_file) == 1  # Dana's own photo only
    assert own["owner"].client.get(f"/sync/blobs/{victims_file}").status_code == 404


@pytest.mark.parametrize("victims_file", ["upload not attached yet"], indirect=True)
def test_the_uploader_still_uses_their_own_file(app, victims_file, make):
    """The rule is not a wall: Dana names her own upload in her O&M log and it becomes the entry's photo."""
    dana = db.session.scalar(select(User).where(User.name == "Dana Whitfield"))
    permit = make.permit(inspectors=[dana], construction_started_on=dt.date(2026, 6, 2))
    response = _browser(app, dana).post(f"/permits/{permit.id}/om/log", {
        "log-kind": "inspection", "log-performed_on": utcnow().astimezone(LOCAL_TZ).date().isoformat(),
        "log-description": "Checked the outlet", "log-performed_by": "Dana Whitfield", "photos_sha256": victims_file})
    assert response.status_code == 303, response.text
    assert _named_by_own_records(victims_file) == 1
