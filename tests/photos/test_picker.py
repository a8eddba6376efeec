"""The photo picker partial other forms include, and the permit's photo list."""
from __future__ import annotations

import re

from flask import render_template, render_template_string
from flask_login import login_user
from tests.photos.photo_builders import make_finding, make_inspection, make_jpeg

from inspect_app.extensions import db
from inspect_app.photos import services


def render_picker(app, user, **context) -> str:
    with app.test_request_context("/"):
        login_user(user)
        return render_template("photos/_photo_picker.html", **context)


def test_an_editable_picker_offers_the_camera_and_uploads_with_htmx(app, site):
    services.store_photo(site["inspector"], site["permit"], make_jpeg(), caption="North swale",
                         inspection=site["inspection"])
    db.session.commit()

    html = render_picker(app, site["inspector"], permit=site["permit"], editable=True,
                         photo_target={"inspection_id": site["inspection"].id})

    file_input = re.search(r'<input[^>]*type="file"[^>]*>', html).group(0)
    assert 'accept="image/*"' in file_input and 'capture="environment"' in file_input
    assert 'name="photo"' in file_input
    assert 'name="caption"' in html
    assert 'hx-encoding="multipart/form-data"' in html
    assert f'hx-post="/permits/{site["permit"].id}/photos?inspection_id={site["inspection"].id}"' in html
    assert "North swale" in html and "Jun 3, 2026 9:30 AM" in html
    assert "Save caption" in html


def test_the_picker_works_inside_another_form(app, site):
    """Its inputs belong to no form and the upload sends only the photo and caption."""
    with app.test_request_context("/"):
        login_user(site["inspector"])
        html = render_template_string(
            '<form id="report" method="post"><input name="notes">'
            '{% include "photos/_photo_picker.html" %}</form>',
            permit=site["permit"], editable=True, photo_target={"inspection_id": site["inspection"].id})

    picker = html.split('class="photo-picker"', 1)[1]
    assert "<form" not in picker
    for control in re.findall(r"<input[^>]*>", picker):
        assert re.search(r'form="photos-[^"]+-none"', control), control
    assert 'hx-params="photo,caption"' in picker


def test_a_read_only_picker_shows_photos_without_upload(app, site):
    services.store_photo(site["inspector"], site["permit"], make_jpeg(), caption="Outlet apron",
                         inspection=site["inspection"])
    site["inspection"].status = "submitted"  # the owner sees a report's photos once it is signed, not its draft's
    db.session.commit()

    html = render_picker(app, site["owner"], permit=site["permit"],
                         photo_target={"inspection_id": site["inspection"].id})

    assert "Outlet apron" in html
    assert 'type="file"' not in html and "Save caption" not in html


def test_the_owner_gets_no_upload_on_an_inspection_even_when_asked(app, site):
    services.store_photo(site["inspector"], site["permit"], make_jpeg(), inspection=site["inspection"])
    db.session.commit()

    html = render_picker(app, site["owner"], permit=site["permit"], editable=True,
                         photo_target={"inspection_id": site["inspection"].id})

    assert 'type="file"' not in html and "Save caption" not in html


def test_a_submitted_report_offers_no_upload_even_when_asked(app, site):
    submitted = make_inspection(site["permit"], site["inspector"], status="submitted")

    html = render_picker(app, site["inspector"], permit=site["permit"], editable=True,
                         photo_target={"inspection_id": submitted.id})

    assert 'type="file"' not in html
    assert "was submitted on Jun 3, 2026 and can no longer change" in html


def test_pickers_of_one_page_have_distinct_ids(app, site):
    finding = make_finding(site["inspection"])

    first = render_picker(app, site["inspector"], permit=site["permit"], editable=True,
                          photo_target={"inspection_id": site["inspection"].id})
    second = render_picker(app, site["inspector"], permit=site["permit"], editable=True,
                           photo_target={"finding_id": finding.id})

    ids = re.findall(r'\bid="([^"]+)"', first) + re.findall(r'\bid="([^"]+)"', second)
    assert len(ids) == len(set(ids))


def test_the_permits_photo_list_says_what_each_photo_is_of(site, login):
    finding = make_finding(site["inspection"])
    services.store_photo(site["inspector"], site["permit"], make_jpeg(), caption="Whole site",
                         inspection=site["inspection"])
    services.store_photo(site["inspector"], site["permit"], make_jpeg(shade=30), caption="Fence down",
                         finding=finding)
    db.session.commit()
    agent = login(site["agent"])
    # Nothing of a draft report is anyone's but its author's: the agent sees its photos once submitted.
    assert "Whole site" not in agent.get(f"/permits/{site['permit'].id}/photos").text
    site["inspection"].status, site["inspection"].submitted_at = "submitted", site["inspection"].performed_at
    db.session.commit()

    page = agent.get(f"/permits/{site['permit'].id}/photos")

    assert page.status_code == 200
    assert "2 photos" in page.text
    assert "Erosion control inspection, Jun 3, 2026" in page.text
    assert "finding: Silt fence down along the north edge" in page.text
    assert page.text.index("Fence down") < page.text.index("Whole site")  # newest first
    assert 'type="file"' not in page.text


def test_the_permit_page_links_to_its_photos(site, login):
    services.store_photo(site["inspector"], site["permit"], make_jpeg(), inspection=site["inspection"])
    db.session.commit()
    owner = login(site["owner"])
    assert "1 photo from inspections" not in owner.get(f"/permits/{site['permit'].id}").text  # a draft's
    site["inspection"].status, site["inspection"].submitted_at = "submitted", site["inspection"].performed_at
    db.session.commit()

    page = owner.get(f"/permits/{site['permit'].id}")

    assert page.status_code == 200
    assert "1 photo from inspections" in page.text
    assert f'href="/permits/{site["permit"].id}/photos"' in page.text


def test_a_picker_shows_no_one_a_draft_reports_photos_but_its_author(app, site):
    """The picker of a record listed every photo attached to it: asked for a draft report, it showed the draft's
    photos to the permit's owner, who may not see the draft."""
    services.store_photo(site["inspector"], site["permit"], make_jpeg(), caption="Outlet apron",
                         inspection=site["inspection"])
    db.session.commit()
    target = {"inspection_id": site["inspection"].id}
    assert "Outlet apron" not in render_picker(app, site["owner"], permit=site["permit"], photo_target=target)
    assert "Outlet apron" in render_picker(app, site["inspector"], permit=site["permit"], photo_target=target)
