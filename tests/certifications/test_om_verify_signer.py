"""The public check page of a reviewed O&M certification names the responsible party who signed it (§380-14
C(2)(l): the certification is theirs), with the agent who reviewed it beside them; it named the agent alone."""
from __future__ import annotations

import re

from inspect_app.certifications import services as om
from inspect_app.documents import services as documents
from inspect_app.extensions import db


def test_the_reviewed_certifications_verify_page_keeps_the_responsible_party_as_signer(completed_permit, owner,
                                                                                       agent, client):
    permit = completed_permit(owner)
    cert = om.certify(owner, permit, without_entries_confirmed=True)
    db.session.commit()
    om.review(agent, cert, decision="accepted", note=None)
    db.session.commit()

    reviewed = documents.current_document("om_certification", cert.id)
    assert reviewed.occasion == "reviewed"
    page = client.get(f"/verify/{reviewed.id}").text
    signed_by = re.search(r'<dd id="signed-by">(.*?)</dd>', page, re.S).group(1)
    assert " ".join(signed_by.split()) == "Pat Owner; reviewed by Alex Agent", signed_by
