"""Mark up a photo the draft already holds, from the report, and come back to it (issue 31: "Mark it up in an overlay
that returns to the same place"; it used to be Permit → Photos → See all → Mark up, with no way back)."""
from __future__ import annotations

import io
import json
import re

import pytest
from sqlalchemy import select

from inspect_app.extensions import db
from inspect_app.inspections.models import Inspection
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


def test_an_address_with_a_line_break_after_it_is_ignored_not_a_500(draft_with_photo):
    browser, draft, photo = draft_with_photo
    drawn = browser.post(f"/photos/{photo.id}/markup?back=/inspections/{draft.id}%0A", {"markup": json.dumps(ARROW)})
    assert drawn.status_code == 303 and drawn.headers["Location"] == f"/photos/{photo.id}/markup"


def test_a_caption_with_a_control_character_is_refused_and_nothing_kept(draft_with_photo):
    """A NUL sent inside the captions' JSON (where the form's NUL check does not look) is refused, as PostgreSQL
    refuses to store it."""
    browser, draft, photo = draft_with_photo
    page = browser.get(f"/inspections/{draft.id}").text
    refused = browser.post(f"/inspections/{draft.id}", {**report_form(page)[0], "photos_caption": json.dumps(
        {photo.original_sha256: "bad\u0000caption"}), "notes": "kept?"})
    assert refused.status_code == 422 and "control character" in refused.text
    db.session.expire_all()
    assert db.session.get(Photo, photo.id).caption != "bad\u0000caption"


def test_a_photo_added_to_a_blank_draft_makes_it_an_inspection(make, signed_in):
    """A photo kept in the draft a tap on Start made (from the permit's photo page) is something kept: the draft owes
    its report and is listed, and is not taken for another Start's."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"])
    browser = signed_in(inspector)
    draft = start(browser, permit, "erosion_control")
    assert draft.is_blank
    added = browser.post(f"/permits/{permit.id}/photos?inspection_id={draft.id}",
                         {"caption": "Gate", "photo": (io.BytesIO(jpeg(22)), "gate.jpg")},
                         content_type="multipart/form-data")
    assert added.status_code in (200, 303), added.text
    db.session.expire_all()
    assert not db.session.get(Inspection, draft.id).is_blank
    assert start(browser, permit, "erosion_control").id != draft.id
