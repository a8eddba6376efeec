"""The public check page of a reviewed O&M certification names the responsible party who signed it (§380-14
C(2)(l): the certification is theirs), with the agent who reviewed it beside them; it named the agent alone."""
from __future__ import annotations

import datetime as dt
import re

from sqlalchemy import select

from inspect_app.certifications import services as om
from inspect_app.certifications.models import OMCertification, ResponsibleParty
from inspect_app.documents import services as documents
from inspect_app.extensions import db
from inspect_app.rules.calendar import add_months
from tests.certifications.om_helpers import local_today


def test_the_reviewed_certifications_verify_page_keeps_the_responsible_party_as_signer(make, client):
    pat = make.user("permittee", name="Pat Owner")
    agent = make.user("agent", name="Alex Agent")
    completed_on = add_months(local_today(), -12) - dt.timedelta(days=10)
    permit = make.permit(owner=pat, construction_started_on=completed_on - dt.timedelta(days=200),
                         issued_on=completed_on - dt.timedelta(days=300))
    permit.status, permit.completed_on = "completed", completed_on
    db.session.add(ResponsibleParty(permit_id=permit.id, user_id=pat.id, name=pat.name, role="owner",
                                    email=pat.email, starts_on=completed_on))
    db.session.commit()
    cert = om.certify(pat, permit, without_entries_confirmed=True)
    db.session.commit()
    om.review(agent, cert, decision="accepted", note=None)
    db.session.commit()

    reviewed = documents.current_document("om_certification", cert.id)
    assert reviewed.occasion == "reviewed"
    page = client.get(f"/verify/{reviewed.id}").text
    signed_by = re.search(r'<dd id="signed-by">(.*?)</dd>', page, re.S).group(1)
    assert " ".join(signed_by.split()) == "Pat Owner; reviewed by Alex Agent", signed_by
