"""40 CFR 122.22(d) (CGP 2022 Appendix I.11.d): every report is certified in the regulation's own words, from one
source, and the final inspection's report signs the same statement as the others."""
from __future__ import annotations

import datetime as dt
import io
import re

from pypdf import PdfReader

from inspect_app.extensions import db
from inspect_app.inspections import canonical
from inspect_app.inspections.models import Inspection
from tests.inspections.report_helpers import start, submit

# 40 CFR 122.22(d), as the Code of Federal Regulations prints it.
VERBATIM = (
    "I certify under penalty of law that this document and all attachments were prepared under my direction or "
    "supervision in accordance with a system designed to assure that qualified personnel properly gather and "
    "evaluate the information submitted. Based on my inquiry of the person or persons who manage the system, or "
    "those persons directly responsible for gathering the information, the information submitted is, to the best "
    "of my knowledge and belief, true, accurate, and complete. I am aware that there are significant penalties "
    "for submitting false information, including the possibility of fine and imprisonment for knowing violations."
)


def _flat(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def test_the_certification_is_40_cfr_122_22_d_word_for_word():
    """The one source of the words is 40 CFR 122.22(d) as printed: "properly gather and evaluate"."""
    assert canonical.CFR_122_22_D == VERBATIM


def test_every_report_of_every_town_certifies_the_same_words(app):
    """40 CFR 122.22(d) heads every statement; a town's own adds the program the inspection was made under and
    never rewords the regulation."""
    for profile in app.extensions["profiles"].values():
        for kind in profile.inspection_types:
            statement = canonical.certification_statement(profile, kind)
            assert statement.startswith(VERBATIM), (profile.key, kind.key)
            assert "gathered and evaluated" not in statement
            if kind.certification == "town":
                assert statement == f"{VERBATIM} I also certify that the inspection this report records was " \
                                    f"performed as {profile.inspection_program} requires."


def test_the_final_inspection_report_signs_the_40_cfr_122_22_d_statement(make, signed_in):
    """The final's report (§380-16 C(4)(e)) certifies in the words of 40 CFR 122.22(d), on the page and the PDF."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], construction_started_on=dt.date(2026, 6, 2))
    client = signed_in(inspector)
    final = start(client, permit, "final")
    assert VERBATIM in _flat(client.get(f"/inspections/{final.id}").text)  # what the signer reads before signing
    assert submit(client, final).status_code == 303
    db.session.expire_all()
    final = db.session.get(Inspection, final.id)
    assert final.certification_statement.startswith(VERBATIM)
    pdf = client.get(f"/documents/inspections/{final.id}.pdf")
    text = _flat(" ".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf.data)).pages))
    assert VERBATIM in text
