"""The device's outbox keeps a post's files as their bytes (static/formstore.js, docs/webkit.md); a post kept
by the release before, with File objects in the record, must still be sent after the update."""
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

# The record as the previous release kept it: each file entry a File object, not its bytes.
AS_BEFORE = """async () => {
    const raw = DeviceStore("posts");
    const [post] = await raw.all();
    post.entries = post.entries.map(([name, value]) => [name, value && value.fileBytes
        ? new File([value.fileBytes], value.name, {type: value.type}) : value]);
    await raw.put(post);
    const [again] = await raw.all();
    return again.entries.filter(([, value]) => value instanceof File && value.size).length;
}"""


def test_a_post_kept_by_the_release_before_with_file_objects_is_still_sent(site, server, page):
    inspector, permit = site
    sign_in_controlled(page, server, inspector)
    hold_permits(page, server)
    server.stop()
    page.goto(new_report_url(server, permit))
    photos = [jpeg(71), jpeg(72)]
    inspection_id = fill_erosion_report(page, photos)
    assert page.evaluate(AS_BEFORE) == 2

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
