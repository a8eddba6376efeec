"""The device's outbox keeps a post's files as Files where the engine stores them, as their bytes where it
does not (WebKit with no disk for the origin: static/formstore.js, docs/webkit.md); a post kept either way,
also by the release before (bytes), is sent after the update."""
from __future__ import annotations

import pytest
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
from inspect_app.photos.models import Photo

from tests.offline.offline_helpers import (
    fill_erosion_report, hold_permits, jpeg, new_report_url, outbox, sha256, sign_in_controlled, wait_for_outbox,
)

pytestmark = pytest.mark.browser

# How this Chromium kept the post: the files as they are, Files in the record.
KEPT_FILES = """async () => {
    const [post] = await DeviceStore("posts").all();
    return post.entries.filter(([, value]) => value instanceof File && value.size).length;
}"""
# The record as the release before kept it (and as WebKit keeps it): each file as its bytes, name and type.
AS_BYTES = """async () => {
    const raw = DeviceStore("posts");
    const [post] = await raw.all();
    post.entries = await Promise.all(post.entries.map(async ([name, value]) => [name, value instanceof File
        ? {fileBytes: await value.arrayBuffer(), name: value.name, type: value.type} : value]));
    await raw.put(post);
    const [again] = await raw.all();
    return again.entries.filter(([, value]) => value && value.fileBytes && value.fileBytes.byteLength).length;
}"""


def test_a_post_kept_as_its_files_bytes_by_the_release_before_is_still_sent(site, server, page):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    photos = [jpeg(71), jpeg(72)]
    inspection_id = fill_erosion_report(page, photos)
    assert page.evaluate(KEPT_FILES) == 2
    assert page.evaluate(AS_BYTES) == 2

    server.start()
    page.goto(f"{server.url}/outbox")
    [item] = outbox(page)
    assert page.locator(f"#item-{item['id']} .photo-grid img").count() == 2
    page.click("#sync-now")
    wait_for_outbox(page, lambda items: not items)
    db.session.expire_all()
    assert db.session.get(Inspection, inspection_id).status == "submitted"
    stored = db.session.scalars(select(Photo.original_sha256)).all()
    assert sorted(stored) == sorted(sha256(p) for p in photos)
