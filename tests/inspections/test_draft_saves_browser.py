"""Save draft on a tablet: what was saved is shown once, never offered again as unsaved typing to be saved twice, and
what was typed is what is kept."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from sqlalchemy import func, select

from inspect_app.extensions import db
from inspect_app.inspections.models import Finding
from tests.offline.offline_helpers import add_finding, sign_in_controlled

pytestmark = pytest.mark.browser


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1024, "height": 768}, "has_touch": True}


def _start_draft(make, live_server, page, **permit) -> str:
    """An inspector signed in on the tablet starts an erosion-control report from the permit page: its id."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1"], **permit)
    sign_in_controlled(page, live_server, inspector)
    page.goto(f"{live_server.url}/permits/{permit.id}")
    page.locator("#start-inspection button[data-start=erosion_control]").tap()
    page.wait_for_url(re.compile(r"/inspections/[0-9a-f-]{36}$"))
    page.wait_for_load_state()
    return page.url.rsplit("/", 1)[-1]


def test_a_finding_saved_with_save_draft_is_not_offered_again_as_new_nor_made_twice(
        make, live_server, page, weather_offline):
    """A finding typed and saved with Save draft is listed as saved; the page put the device's copy of the typing
    back too, as an unsaved "New finding" card, and the next save recorded the finding twice."""
    draft_id = _start_draft(make, live_server, page)

    add_finding(page, "Inlet bag torn at CB-1", violation=False)
    page.wait_for_timeout(1_000)  # the typing is kept on the device (300 ms after the last keystroke)
    with page.expect_navigation():
        page.locator("#save-draft").tap()
    expect(page.locator("#saved")).to_have_text(re.compile(r"^Saved \d\d:\d\d$"))
    page.wait_for_timeout(1_000)  # the page's scripts put back what the device kept

    # The finding is saved and listed; no unsaved copy of it waits in the form.
    expect(page.locator("[data-list-of=finding-template] [data-part]")).to_have_count(0)

    with page.expect_navigation():
        page.locator("#save-draft").tap()
    expect(page.locator("#saved")).to_have_text(re.compile(r"^Saved \d\d:\d\d$"))
    db.session.expire_all()
    assert db.session.scalar(select(func.count()).select_from(Finding)
                             .where(Finding.inspection_id == draft_id)) == 1


def test_a_site_photo_saved_on_a_draft_is_shown_on_the_draft(make, live_server, page, weather_offline):
    """Save draft keeps the photo of the site (a row of the report), and the draft's page shows it: it showed no
    trace of it, "Photos of the site" saying "No file chosen" again, as if it were lost (a checklist item's photo
    was shown)."""
    from inspect_app.photos.models import Photo
    from tests.offline.offline_helpers import jpeg, photo_file

    _start_draft(make, live_server, page)

    page.set_input_files("#photos", [photo_file("site.jpg", jpeg())])
    with page.expect_navigation():
        page.locator("#save-draft").tap()
    expect(page.locator("#saved")).to_have_text(re.compile(r"^Saved \d\d:\d\d$"))
    db.session.expire_all()
    photo = db.session.scalar(select(Photo))
    assert photo is not None  # kept
    expect(page.locator(f"#photo-{photo.id}")).to_be_visible()


def test_the_name_typed_in_or_name_is_who_does_the_corrective_action(make, live_server, page, weather_offline):
    """Kind chosen first (the first field of the action): the page fills "Who does it" with the permittee. The
    inspector then types the contractor in "…or name": the saved action names the contractor (it named the
    permittee, the typed name gone without a word)."""
    from inspect_app.inspections.models import CorrectiveAction

    _start_draft(make, live_server, page, owner=make.user("permittee"))

    page.locator("#add-new-finding").tap()
    part = page.locator("[data-list-of=finding-template] [data-part]").last
    prefix = part.locator("textarea[name^=finding-new-]").get_attribute("name").removesuffix("-description")
    action = prefix.replace("finding-new-", "action-new-")
    part.locator(f"[name={prefix}-description]").fill("Silt fence down along the east line")
    part.locator(f"[name={action}-kind]").select_option("significant_repair")
    part.locator(f"[name={action}-description]").fill("Reset and re-trench the silt fence")
    part.locator(f"[name={action}-owner_name]").fill("Acme Site Work")
    with page.expect_navigation():
        page.locator("#save-draft").tap()
    expect(page.locator("#saved")).to_have_text(re.compile(r"^Saved \d\d:\d\d$"))
    db.session.expire_all()
    assert [a.owner_name for a in db.session.scalars(select(CorrectiveAction))] == ["Acme Site Work"]
