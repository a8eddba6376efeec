"""Mark up a photo the draft already holds, from the report, and come back to it (issue 31: "Mark it up in an overlay
that returns to the same place"; it used to be Permit → Photos → See all → Mark up, with no way back)."""
from __future__ import annotations

import io
import json
import re

import pytest
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.photos.models import Photo
from tests.builders import jpeg
from tests.inspections.report_helpers import report_form, start, submit

ARROW = [{"kind": "arrow", "from": [0.2, 0.8], "to": [0.6, 0.3]}]
ITEM_PHOTOS = re.compile(r"^item-([a-z_0-9]+)-site-photos$")


@pytest.fixture(autouse=True)
def _weather_kept_offline(weather_offline):
    """The weather service is unreachable: reports keep their weather pending."""


@pytest.fixture
def draft_with_photo(make, signed_in):
    """An inspector's draft holding one photo taken on a checklist item (kept with Save draft)."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    browser = signed_in(inspector)
    draft = start(browser, permit, "erosion_control")
    page = browser.get(f"/inspections/{draft.id}").text
    field = next(name for name in report_form(page)[1] if ITEM_PHOTOS.match(name))
    saved = browser.post(f"/inspections/{draft.id}", {**report_form(page)[0], field: (io.BytesIO(jpeg(21)), "a.jpg")},
                         content_type="multipart/form-data")
    assert saved.status_code == 303, saved.text
    photo = db.session.scalars(select(Photo).where(Photo.permit_id == permit.id)).one()
    return browser, draft, photo


def test_a_photo_the_draft_holds_is_marked_up_from_the_report_and_back_to_it(draft_with_photo):
    browser, draft, photo = draft_with_photo
    report = f"/inspections/{draft.id}"

    page = browser.get(report).text
    link = f'href="/photos/{photo.id}/markup?back=/inspections/{draft.id}"'
    assert link.replace("/inspections/", "%2Finspections%2F") in page or link in page

    markup = browser.get(f"/photos/{photo.id}/markup", query_string={"back": report})
    assert markup.status_code == 200 and "Back to the report" in markup.text
    drawn = browser.post(f"/photos/{photo.id}/markup?back={report}", {"markup": json.dumps(ARROW)})

    assert drawn.status_code == 303 and drawn.headers["Location"] == f"{report}#photo-{photo.id}"
    db.session.expire_all()
    assert db.session.get(Photo, photo.id).markup == ARROW
    assert f'id="photo-{photo.id}"' in browser.get(report).text  # the place it comes back to


def test_an_address_that_is_not_a_report_is_never_gone_back_to(draft_with_photo):
    browser, _, photo = draft_with_photo
    for elsewhere in ("https://example.net/phish", "//example.net/x", "/logout", "/inspections/x/../../admin"):
        page = browser.get(f"/photos/{photo.id}/markup", query_string={"back": elsewhere}).text
        assert "Back to the report" not in page
        drawn = browser.post(f"/photos/{photo.id}/markup?back={elsewhere}", {"markup": json.dumps(ARROW)})
        assert drawn.status_code == 303 and drawn.headers["Location"] == f"/photos/{photo.id}/markup"


def test_a_submitted_reports_photos_have_no_way_to_draw_on_them_from_the_report(draft_with_photo):
    """A submitted report is the record: its page offers no drawing on its photos."""
    browser, draft, photo = draft_with_photo
    assert submit(browser, draft).status_code == 303
    page = browser.get(f"/inspections/{draft.id}").text
    assert f'id="photo-{photo.id}"' in page and f"/photos/{photo.id}/markup" not in page
