"""The example documents in docs/examples, as a reader checks them: made by today's code (docs/examples/
make_examples.py), each frozen with its id, QR code and a full check link, each citing its own town."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from pypdf import PdfReader

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
NAMES = ("inspection-report", "stop-work-order", "certificate-of-completion", "om-certification",
         "inspection-history")


def _text(name: str) -> str:
    reader = PdfReader(io.BytesIO((EXAMPLES / f"{name}.pdf").read_bytes()))
    return re.sub(r"\s+", " ", " ".join(page.extract_text() for page in reader.pages))


@pytest.mark.parametrize("name", NAMES)
def test_each_example_is_frozen_with_its_id_qr_code_and_a_full_check_link(name):
    text = _text(name)
    assert "not frozen at signing" not in text
    assert re.search(r"Document [0-9a-f-]{36} · SHA-256 [0-9a-f]{16}", text)
    assert re.search(r"Verify at https://[\w.-]+/verify/[0-9a-f-]{36}", text)  # a full URL, not a bare path


def test_the_southborough_stop_work_example_cites_southborough_clauses():
    """Southborough §6.0 (enforcement), never Longmeadow's §380 nor §5.0 (Definitions)."""
    text = _text("stop-work-order")
    assert "Town of Southborough" in text and "Under §6.0 of the Town of Southborough" in text
    assert "§380" not in text and "§5.0" not in text
