"""A save or a discard of a draft another tab discarded meanwhile: a plain answer (the draft is gone), never a 500
that the outbox would send again."""
from __future__ import annotations

from inspect_app.extensions import db
from inspect_app.inspections import services as inspections
from inspect_app.inspections.models import Inspection
from inspect_app.reporting import views
from tests.inspections.report_helpers import report_form
from tests.inspections.test_submit_races import _site


def _discarded_meanwhile(app, monkeypatch, inspector, report_id):
    """load_inspection as it is, then (before the post holds the draft) the author's discard from another tab,
    committed: what a discard that held the draft first leaves for this post."""
    original = views.load_inspection

    def then_discarded(inspection_id, edit=False):
        found = original(inspection_id, edit)
        with app.app_context():
            db.session.remove()
            inspections.discard_draft(db.session.get(type(inspector), inspector.id),
                                      db.session.get(Inspection, report_id))
            db.session.commit()
            db.session.remove()
        return found

    monkeypatch.setattr(views, "load_inspection", then_discarded)


def test_a_background_save_of_a_draft_discarded_meanwhile_is_not_a_server_error(app, make, monkeypatch):
    inspector, tab_a, tab_b, report_id = _site(app, make)
    url = f"/inspections/{report_id}"
    autosave = report_form(tab_b.get(url).text)[0] | {"notes": "typed in tab B", "posted_by": inspector.id,
                                                       "csrf_token": tab_b.token}
    _discarded_meanwhile(app, monkeypatch, inspector, report_id)
    answer = tab_b.client.post(url, data=autosave, headers={"X-Autosave": "1"})
    assert answer.status_code in (404, 409, 410), answer.status_code


def test_a_discard_sent_twice_at_once_is_not_a_server_error(app, make, monkeypatch):
    inspector, tab_a, tab_b, report_id = _site(app, make)
    _discarded_meanwhile(app, monkeypatch, inspector, report_id)
    answer = tab_b.post(f"/inspections/{report_id}/discard", {"confirm": "yes"})
    assert answer.status_code in (303, 404, 409, 410), answer.status_code
