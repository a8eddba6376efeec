"""The O&M plan's people, as its contents clauses list them: the owner(s) of the system (§380-14 C(1);
Southborough §7.6 a)), the name and address of whoever operates and maintains it (§380-14 C(2)(a); §7.6 d)(1))
and whoever finances maintenance and repairs (§380-14 C(2)(b); §7.6 d)(2)). Recorded by the town's agent on the
O&M plan page; a missing address is refused beside its field."""
from __future__ import annotations

import html

import pytest
from sqlalchemy import func, select

from inspect_app.certifications.models import ResponsibleParty
from inspect_app.extensions import db
from tests.certifications.om_helpers import local_today
from tests.inspections.report_helpers import error_beside

# (clause, town, role, address, what the plan page then shows, or the refusal beside the address)
CASES = [
    ("§380-14 C(1)", "longmeadow", "owner", "", "Owner", None),
    ("§380-14 C(2)(a)", "longmeadow", "operational", "12 Elm Street, Longmeadow, MA", "Operationally responsible", None),
    ("§380-14 C(2)(a)", "longmeadow", "operational", " ", None,
     "Give the address of the person responsible for operation and maintenance (§380-14 C(2))."),
    ("§380-14 C(2)(b)", "longmeadow", "financial", "", "Financially responsible", None),
    ("§7.6 a)", "southborough", "owner", "", "Owner", None),
    ("§7.6 d)(1)", "southborough", "operational", "", None,
     "Give the address of the person responsible for operation and maintenance (§7.6 d)(1)-(2))."),
    ("§7.6 d)(2)", "southborough", "financial", "", "Financially responsible", None),
]


@pytest.mark.parametrize("clause, town, role, address, shown, refusal", CASES)
def test_the_plan_names_its_owners_and_responsible_parties(clause, town, role, address, shown, refusal,
                                                           make, signed_in):
    permit = make.permit(town)
    browser = signed_in(make.user("agent", town=town))
    response = browser.post(f"/permits/{permit.id}/om/parties", {
        "party-role": role, "party-name": "Maple Ridge Homes LLC", "party-address": address,
        "party-starts_on": local_today().isoformat(), "party-replaces_current": "y"})
    if refusal:
        assert response.status_code == 422
        assert error_beside(response.text, "party-address") == refusal
        assert db.session.scalar(select(func.count()).select_from(ResponsibleParty)) == 0
        return
    assert response.status_code == 303, response.text
    page = html.unescape(browser.get(f"/permits/{permit.id}/om").text)
    row = page.split('id="parties"')[1].split("</table>")[0]
    assert f"<td>{shown}</td><td>Maple Ridge Homes LLC</td>" in row
