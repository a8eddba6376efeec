"""The previous release's outbox, in real Chromium: it kept unsent work in a database of its own
("inspect-offline": sync operations, their files in "blobs"), which does not say whose it is. After the
update the outbox shows it waiting, sends it once through the sync endpoints when the person signed in says
it is theirs, and deletes that database."""
from __future__ import annotations

import base64
import datetime as dt
import uuid

import pytest
from playwright.sync_api import expect
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.inspections.models import CorrectiveAction
from inspect_app.photos.models import Photo
from tests.offline.offline_helpers import jpeg, sha256, sign_in_controlled, wait_until

pytestmark = pytest.mark.browser

# The previous release's database, as its outbox.js made it (version 1, four stores), with one item.
SEED = """async ({item, blob}) => {
  const db = await new Promise((resolve, reject) => {
    const request = indexedDB.open("inspect-offline", 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore("outbox", { keyPath: "op_id" });
      request.result.createObjectStore("blobs", { keyPath: "sha256" });
      request.result.createObjectStore("drafts", { keyPath: "key" });
      request.result.createObjectStore("held", { keyPath: "id" });
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  const bytes = Uint8Array.from(atob(blob.b64), (c) => c.charCodeAt(0));
  await new Promise((resolve, reject) => {
    const tx = db.transaction(["outbox", "blobs"], "readwrite");
    tx.objectStore("blobs").put({ sha256: blob.sha256, blob: new Blob([bytes], { type: "image/jpeg" }), type: "image/jpeg" });
    tx.objectStore("outbox").put(item);
    tx.oncomplete = resolve;
    tx.onerror = () => reject(tx.error);
  });
  db.close();
}"""
DATABASES = "indexedDB.databases().then((found) => found.map((d) => d.name))"


def _wait_until_deleted(page) -> None:
    wait_until(page, lambda: "inspect-offline" not in page.evaluate(DATABASES),
               "the previous release's database is still on the device")


def test_an_outbox_left_by_the_previous_release_is_sent_once_and_its_database_deleted(site, open_action, server, page):
    inspector, _ = site
    action = open_action
    photo = jpeg(7)
    done = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=1)).replace(microsecond=0)
    op_id = str(uuid.uuid4())
    item = {
        "op_id": op_id, "kind": "action.close", "label": "Reset the silt fence", "href": "/", "state": "waiting",
        "created_at": done.isoformat(), "blobs": [{"sha256": sha256(photo), "size": len(photo), "type": "image/jpeg",
                                                    "photo": True, "caption": ""}],
        "op": {"op_id": op_id, "kind": "action.close", "record_id": action.id, "base_revision": action.revision,
               "device_time": done.isoformat(),
               "payload": {"completed_at": done.isoformat(), "note": "Fence re-trenched",
                           "evidence_photo": {"id": str(uuid.uuid4()), "sha256": sha256(photo), "caption": None}}},
    }
    seed = {"item": item, "blob": {"sha256": sha256(photo), "b64": base64.b64encode(photo).decode()}}
    sign_in_controlled(page, server, inspector)
    page.evaluate(SEED, seed)
    assert "inspect-offline" in page.evaluate(DATABASES)

    page.goto(f"{server.url}/outbox")  # the new release's page: its outbox finds the old database...
    page.evaluate("Outbox.syncNow()")  # ...which names no one: it is not sent as whoever is signed in
    expect(page.locator("#outbox-unclaimed")).to_contain_text("1 item(s) were saved on this device before")
    db.session.expire_all()
    assert db.session.get(CorrectiveAction, action.id).status == "open"
    page.click("#claim-all")  # until they say it is theirs
    _wait_until_deleted(page)
    db.session.expire_all()
    closed = db.session.get(CorrectiveAction, action.id)
    assert (closed.status, closed.closeout_note) == ("completed", "Fence re-trenched")
    [evidence] = db.session.scalars(select(Photo).where(Photo.original_sha256 == sha256(photo))).all()
    assert closed.evidence_photo_id == evidence.id

    # The same item found again (a second tab of the old release wrote it back): applied once all the same.
    page.evaluate(SEED, seed)
    page.reload()
    page.click("#claim-all")
    _wait_until_deleted(page)
    db.session.expire_all()
    assert len(db.session.scalars(select(Photo).where(Photo.original_sha256 == sha256(photo))).all()) == 1
    assert db.session.get(CorrectiveAction, action.id).revision == closed.revision
