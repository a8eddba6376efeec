"""The example documents in docs/examples, as a reader checks them: made by today's code (docs/examples/
make_examples.py), each frozen with its id, QR code and a full check link, each citing its own town."""
from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from pypdf import PdfReader

from inspect_app.profiles import PROFILE_FOLDER, load_profile
from tests.integrity.test_verify_page import _qr_codes

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


def test_the_example_report_is_made_by_todays_code_with_every_item_of_todays_checklist():
    """An example older than the checklist it shows is stale (the CGP 5.1.3-5.1.5 items once were missing):
    every item of Longmeadow's erosion-control checklist is printed, with its citation."""
    profile = load_profile(PROFILE_FOLDER / "longmeadow.toml")
    text = _text("inspection-report")
    missing = [item.key for item in profile.inspection_type("erosion_control").checklist
               if " ".join(item.text.split()[:6]) not in text or item.citation not in text]
    assert missing == [], "run python docs/examples/make_examples.py"


@pytest.mark.parametrize("name", NAMES)
def test_each_examples_qr_code_opens_its_own_check_page(name, tmp_path):
    """The QR code a reader scans names the check address the page prints, with the whole hash it shows the start of."""
    pdf, text = (EXAMPLES / f"{name}.pdf").read_bytes(), _text(name)
    printed = re.search(r"Verify at (https://\S+/verify/[0-9a-f-]{36})", text).group(1)
    start = re.search(r"Document [0-9a-f-]{36} · SHA-256 ([0-9a-f]{16})", text).group(1)
    assert any(code.startswith(f"{printed}?sha256={start}") for code in _qr_codes(pdf, tmp_path))
