"""The easements in the record: the certificate of completion and the annual O&M certification list each
easement with its purpose, location, grantor and recording (§380-14 C(2)(d), D(2), D(4); Southborough §7.6 h))."""
from __future__ import annotations

import datetime as dt

import pytest

from inspect_app.certifications.models import Easement, OMCertification, ResponsibleParty
from inspect_app.documents import records, services
from inspect_app.extensions import db
from tests.documents.test_documents import UTC, complete, read

# (clause, town, heading the documents print)
CASES = [
    ("§380-14 C(2)(d)", "longmeadow", "Stormwater management easements (§380-14 C(2)(d), D(2))"),
    ("§380-14 D(2)", "longmeadow", "Stormwater management easements (§380-14 C(2)(d), D(2))"),
    ("§7.6 d)(4)", "southborough", "Stormwater management easements (§7.6 d)(4), f))"),
    ("§7.6 h)", "southborough", "Stormwater management easements (§7.6 d)(4), f))"),
]


@pytest.mark.parametrize("clause, town, heading", CASES)
def test_the_certificate_and_the_certification_list_the_recorded_easements(clause, town, heading, make, seal):
    permit = make.permit(town, owner=make.user("permittee"))
    grantor = ResponsibleParty(permit_id=permit.id, name="Lot 4 Trust", role="easement_grantor",
                               starts_on=dt.date(2026, 10, 1))
    db.session.add(grantor)
    db.session.flush()
    db.session.add(Easement(permit_id=permit.id, purpose="Access for inspection and maintenance of Basin B-1",
                            location="East line of Lot 4", grantor_id=grantor.id, latitude=42.04502, longitude=-72.57311,
                            registry_reference="Book 25170, Page 90", recorded_on=dt.date(2026, 10, 8)))
    db.session.commit()
    certificate = complete(permit, make, seal)
    certification = OMCertification(
        permit_id=permit.id, period_start=dt.date(2026, 10, 12), period_end=dt.date(2027, 10, 11),
        signer_name="Owner LLC", statement="I certify.", submitted_at=dt.datetime(2027, 10, 15, 16, 0, tzinfo=UTC),
        contents={"as_of": "2027-10-11", "entry_ids": [], "missing": []})
    db.session.add(certification)
    db.session.commit()
    assert records.certificate_record(certificate)["easements"][0]["location"] == "East line of Lot 4"
    for text in (read(services.certificate_pdf(permit)), read(services.om_certification_pdf(certification))):
        assert heading in text, (clause, heading)
        assert "Access for inspection and maintenance of Basin B-1" in text
        assert "East line of Lot 4" in text and "Lot 4 Trust" in text
        assert "(42.045020, -72.573110)" in text  # its point on the site map (§380-14 C(2)(m): a map and list)
        assert "Book 25170, Page 90, Oct 8, 2026" in text
        assert town == "longmeadow" or "§380" not in text
