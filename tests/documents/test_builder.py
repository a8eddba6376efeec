"""The PDF builder: what a reader of the printed document can check."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pypdf import PdfReader

from inspect_app.documents.builder import (
    Document,
    DocumentError,
    Fields,
    Heading,
    Paragraphs,
    Photo,
    PhotoGrid,
    SignatureBlock,
    Table,
    render,
)
from tests.builders import jpeg, signature_png

REPO_ROOT = Path(__file__).resolve().parents[2]
RECORD_SHA = hashlib.sha256(b"inspection record 4711").hexdigest()


def make_document(*blocks, title: str = "Erosion Control Inspection Report") -> Document:
    return Document(
        title=title,
        town="Town of Longmeadow",
        authority="Department of Public Works",
        permit_number="LM-SWM-2024-017",
        record_sha256=RECORD_SHA,
        blocks=tuple(blocks),
    )


def pages_text(pdf: bytes) -> list[str]:
    return [page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages]


def flat(text: str) -> str:
    """Text with line breaks and runs of spaces made single spaces, as a reader would read it."""
    return re.sub(r"\s+", " ", text)


REPORT_FIELDS = (
    ("(a) Date and location", "2024-05-03 10:15, 123 Maple Road"),
    ("(b) Inspector and credentials", "Sample Inspector, P.E. (MA 51234)"),
    ("(c) Type of inspection", "Erosion control"),
    ("(d) Date of last inspection", "2024-04-19"),
    ("(e) Weather at the time", "61 °F, overcast, wind 8 mph NW"),
    ("(f) Precipitation, previous 24 hours", "0.42 in"),
    ("(g) Evaluation", "Violations: silt fence undermined"),
    ("(h) Steps to correct violations", "Re-trench the silt fence by 2024-05-10"),
)


def test_every_field_label_and_value_is_in_the_text():
    pdf = render(make_document(
        Heading("Inspection"),
        Fields(REPORT_FIELDS),
        Table(("#", "Finding", "Corrective action", "Deadline"),
              (("1", "Silt fence undermined at station 3+50", "Re-trench and backfill", "2024-05-10"),)),
        SignatureBlock("Sample Inspector", "P.E. (MA 51234), CPESC",
                       "I certify that this report is true, accurate and complete.", "2024-05-03 11:02",
                       signature_png()),
    ))
    text = flat(" ".join(pages_text(pdf)))
    for label, value in REPORT_FIELDS:
        assert label in text
        assert value in text
    for expected in ("Silt fence undermined at station 3+50", "Re-trench and backfill", "2024-05-10",
                     "Sample Inspector", "P.E. (MA 51234), CPESC", "2024-05-03 11:02",
                     "I certify that this report is true, accurate and complete.",
                     "Erosion Control Inspection Report"):
        assert expected in text
    metadata = PdfReader(io.BytesIO(pdf)).metadata
    assert metadata.title == "Erosion Control Inspection Report - Permit LM-SWM-2024-017"
    # The drawn signature is on the page.
    assert len(PdfReader(io.BytesIO(pdf)).pages[-1].images) == 1


def test_every_page_names_the_town_permit_title_and_page_x_of_y():
    pdf = render(make_document(Fields(REPORT_FIELDS), Paragraphs("The perimeter was walked in full. " * 600)))
    texts = pages_text(pdf)
    total = len(texts)
    assert total >= 3
    for number, text in enumerate(texts, 1):
        # Who made it (here the town itself) and whose record keeps it.
        assert "Issued by the Town of Longmeadow, Department of Public Works" in text
        assert "Record of the Town of Longmeadow, Department of Public Works" in text
        assert "Permit LM-SWM-2024-017" in text
        assert "Erosion Control Inspection Report" in text
        assert f"Page {number} of {total}" in text


def test_record_hash_is_on_the_last_page_only():
    pdf = render(make_document(Paragraphs("The perimeter was walked in full. " * 600)))
    texts = pages_text(pdf)
    assert len(texts) >= 2
    assert f"Record SHA-256: {RECORD_SHA}" in texts[-1]
    for text in texts[:-1]:
        assert RECORD_SHA not in text


def test_same_document_gives_identical_bytes_in_this_and_another_process():
    doc = make_document(
        Heading("Inspection"), Fields(REPORT_FIELDS),
        PhotoGrid(tuple(Photo(jpeg(shade=n), f"Photo {n}", "2024-05-03 10:15") for n in range(3))),
        SignatureBlock("Sample Inspector", "P.E.", "I certify.", "2024-05-03", signature_png()),
        Fields((("Owner", "Đặng Thị Hương"),)),  # (and a font embedded for her name)
    )
    first = render(doc)
    assert render(doc) == first
    # A fresh interpreter with another hash seed: nothing may depend on the clock, memory addresses or set
    # order.
    other = subprocess.run(
        [sys.executable, "-c",
         "import pickle, sys; from inspect_app.documents.builder import render; "
         "sys.stdout.buffer.write(render(pickle.load(sys.stdin.buffer)))"],
        input=pickle.dumps(doc), capture_output=True, check=True, cwd=REPO_ROOT,
        env={**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(REPO_ROOT)},
    )
    assert other.stdout == first


def test_markup_in_user_text_prints_literally_and_makes_no_link():
    injected = '<font size=80>BIG</font> <a href="https://example.invalid/x">click</a> A & B &amp; C'
    pdf = render(make_document(
        Fields((("Finding", injected),)),
        Paragraphs(injected),
        Table(("Finding",), ((injected,),)),
        PhotoGrid((Photo(jpeg(), injected, injected),)),
        SignatureBlock(injected, injected, injected, injected),
        title=injected,
    ))
    text = flat(" ".join(pages_text(pdf)))
    # Title, field, paragraph, table cell, caption, photo time, signer's name/credentials/statement/date.
    assert text.count(injected) >= 9
    reader = PdfReader(io.BytesIO(pdf))
    for page in reader.pages:
        assert "/Annots" not in page
    # The font size did not change: no text run bigger than the title's.
    sizes = []
    reader.pages[0].extract_text(visitor_text=lambda t, cm, tm, font, size: sizes.append(size * tm[0]))
    assert max(sizes) <= 16


def test_forty_photos_paginate_six_to_a_page_with_every_caption():
    photos = tuple(Photo(jpeg(shade=n * 6), f"Photo {n + 1}: silt fence at station {n}+50",
                         f"2024-05-03 10:{n:02d}") for n in range(40))
    pdf = render(make_document(PhotoGrid(photos, columns=2)))
    reader = PdfReader(io.BytesIO(pdf))
    # Two columns, three rows to a page: 40 photos take 7 pages, none cut in half.
    assert len(reader.pages) == 7
    assert [len(page.images) for page in reader.pages] == [6] * 6 + [4]
    for number, page in enumerate(reader.pages):
        text = flat(page.extract_text())
        on_this_page = range(number * 6, min(number * 6 + 6, 40))
        for n in on_this_page:
            assert f"Photo {n + 1}: silt fence at station {n}+50" in text
            assert f"Taken: 2024-05-03 10:{n:02d}" in text
        assert len(re.findall(r"Photo \d+:", text)) == len(on_this_page)


def test_photos_are_embedded_as_given_not_re_encoded():
    photo = jpeg(33, size=(640, 480))
    pdf = render(make_document(PhotoGrid((Photo(photo, "North perimeter"),))))
    assert photo in pdf
    assert "Taken: time not recorded" in pages_text(pdf)[0]


def test_portrait_and_landscape_photos_keep_their_shape():
    pdf = render(make_document(PhotoGrid((Photo(jpeg(size=(300, 400)), "portrait"), Photo(jpeg(size=(400, 300)), "landscape")))))
    drawn = []
    page = PdfReader(io.BytesIO(pdf)).pages[0]
    for match in re.finditer(rb"([\d.]+) 0 0 ([\d.]+) [\d.]+ [\d.]+ cm\s*/FormX", page.get_contents().get_data()):
        drawn.append(float(match[1]) / float(match[2]))
    assert sorted(round(ratio, 2) for ratio in drawn) == [0.75, 1.33]


def test_long_paragraph_breaks_across_pages_with_every_word():
    words = [f"w{n:05d}" for n in range(3000)]
    text = " ".join(words)
    assert len(text) > 20_000
    pdf = render(make_document(Heading("Narrative"), Paragraphs(text)))
    texts = pages_text(pdf)
    assert len(texts) >= 3
    found = re.findall(r"w\d{5}", " ".join(texts))
    assert found == words


def test_long_field_value_and_table_cell_break_across_pages():
    words = [f"v{n:05d}" for n in range(3000)]
    pdf = render(make_document(
        Fields((("(g) Evaluation", " ".join(words)),)),
        Table(("Finding", "Corrective action"), (("Silt fence", " ".join(words)),)),
    ))
    texts = pages_text(pdf)
    assert len(texts) >= 5
    assert re.findall(r"v\d{5}", " ".join(texts)) == words * 2


def test_a_word_longer_than_the_line_wraps_instead_of_running_off_the_page():
    long_word = "x" * 3000
    # A caption longer than a page runs on to the next pages rather than failing the document.
    pdf = render(make_document(Paragraphs(long_word), PhotoGrid((Photo(jpeg(), "q" * 6000),))))
    texts = pages_text(pdf)
    assert long_word in re.sub(r"\s+", "", texts[0])
    assert len(texts) >= 2
    assert sum(text.count("q") for text in texts) == 6000


def test_table_header_repeats_on_every_page_it_spans():
    rows = tuple((str(n), f"Finding number {n}", "2024-05-10") for n in range(1, 121))
    pdf = render(make_document(Table(("#", "Finding", "Deadline"), rows)))
    texts = pages_text(pdf)
    assert len(texts) >= 3
    for text in texts:
        assert "Finding Deadline" in flat(text) or ("#\nFinding\nDeadline" in text)
    assert "Finding number 120" in texts[-1]


def test_names_outside_the_built_in_fonts_print_as_written_and_what_no_font_has_is_replaced():
    # The built-in fonts show Windows-1252 alone: "Łódź" printed as "?ódz", "Đặng Thị Hương" as "?ang Thi Huong",
    # on the owner's, the inspector's and the signer's lines of every legal document.
    pdf = render(make_document(Fields((
        ("Finding", "Silt fence down 🚧 at the café, €250 fine"),
        ("Owner", "Zoë Ærø Ł\u200bódź\x00\x07"),
        ("Inspector", "Đặng Thị Hương"),
    )), Paragraphs("Reasons: Łukasz's crew left the basin open.\r\n\r\nSecond: Đặng Thị Hương saw it."),
        title="Report of Ελένη Παπαδοπούλου"))
    texts = pages_text(pdf)
    assert "Silt fence down ? at the café, €250 fine" in texts[0]
    assert "Reasons: Łukasz's crew left the basin open." in texts[0] and "Second: Đặng Thị Hương saw it." in texts[0]
    assert "Zoë Ærø Łódź" in texts[0] and "Đặng Thị Hương" in texts[0]
    assert "Report of Ελένη Παπαδοπούλου" in texts[0]  # the page's foot, drawn on the canvas
    again = render(make_document(Fields((("Owner", "Łukasz"),))))
    assert again == render(make_document(Fields((("Owner", "Łukasz"),))))  # the same bytes each time


@settings(max_examples=25, deadline=None, database=None)
@given(st.text(max_size=300))
def test_any_user_text_renders_and_reads_back(text):
    pdf = render(make_document(
        Heading(text), Fields(((text, text),)), Paragraphs(text), Table((text,), ((text,),)),
        PhotoGrid((Photo(PHOTO, text, text),)), SignatureBlock(text, text, text, text), title=text,
    ))
    reader = PdfReader(io.BytesIO(pdf))
    assert all("/Annots" not in page for page in reader.pages)
    # Plain printable Latin-1 words come back as they went in.
    for word in re.findall(r"[A-Za-z0-9]{3,}", text):
        assert word in " ".join(pages_text(pdf))


PHOTO = jpeg()


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (make_document(PhotoGrid((Photo(b"not an image", "North perimeter"),))),
         "photo 1 ('North perimeter'): not a readable JPEG image"),
        (make_document(PhotoGrid((Photo(signature_png(), "North perimeter"),))), "expected a JPEG"),
        (make_document(PhotoGrid((Photo(jpeg(), "a"),), columns=7)), "1 to 4 columns"),
        (make_document(Table(("#", "Finding"), (("1",),))), "row 1 has 1 cells, the header has 2"),
        (make_document(SignatureBlock("A", "B", "C", "D", b"junk")), "not a readable PNG"),
        (Document("Report", "Town", "Authority", "LM-1", "not-a-hash", ()), "record_sha256"),
    ],
)
def test_bad_input_gets_a_clear_message(doc, message):
    with pytest.raises(DocumentError, match=re.escape(message)):
        render(doc)


def _filler(lines: int) -> Paragraphs:
    """`lines` numbered one-line paragraphs: enough text to leave any amount of room at the foot of page 1."""
    return Paragraphs("\n\n".join(f"Filler line {n}." for n in range(1, lines + 1)))


def _page_of(pages: list[str], words: str) -> int:
    return next(number for number, text in enumerate(pages) if words in flat(text))


SIGNATURE = SignatureBlock(name="Sample Inspector", credentials="P.E. (MA 51234)",
                           statement="I certify that this report is true, accurate and complete.",
                           signed_at_text="2024-05-03 11:02", signature_png=signature_png())


@pytest.mark.parametrize("before", [
    lambda n: (_filler(n), Paragraphs("The last words the signature signs.")),
    lambda n: (_filler(n), Table(("Item", "Answer"), tuple((f"Row {i}", "Yes") for i in range(1, 5))
                                 + (("The last words the signature signs.", "Yes"),))),
    lambda n: (_filler(n), Fields((("Site", "123 Maple Road"), ("Note", "The last words the signature signs.")))),
], ids=["paragraphs", "table", "fields"])
def test_a_signature_never_starts_a_page_alone_it_keeps_the_end_of_what_it_signs(before):
    """Wherever the page ends, the signature, its drawn image and the signer sit on one page with the end of what
    they sign (the last paragraph, row or field before them): never on a page of their own."""
    moved = 0
    for lines in range(30, 48):
        pdf = render(make_document(*before(lines), SIGNATURE))
        pages = pages_text(pdf)
        signed = _page_of(pages, "I certify that this report is true")
        assert "Sample Inspector" in pages[signed] and "Date signed" in pages[signed]
        assert len(PdfReader(io.BytesIO(pdf)).pages[signed].images) == 1  # the drawn signature, on that page
        assert "The last words the signature signs." in flat(pages[signed]), lines
        moved += signed > 0
    assert moved, "the filler never pushed the signature to a second page"


@pytest.mark.parametrize("after", [
    lambda: PhotoGrid((Photo(jpeg(1), "The first photo after the heading", "2024-05-03 10:21"),)),
    lambda: Table(("Item", "Answer"), (("The first row after the heading " + "word " * 60, "Yes"),)),
    lambda: Fields((("Description", "The first row after the heading " + "word " * 60),)),
    lambda: SIGNATURE,
], ids=["photos", "table", "fields", "signature"])
def test_no_heading_is_left_alone_at_the_foot_of_a_page(after):
    moved = 0
    for lines in range(30, 52):
        block = after()
        pages = pages_text(render(make_document(_filler(lines), Heading("The heading in question"), block)))
        heading = _page_of(pages, "The heading in question")
        first = "I certify that this report" if block is SIGNATURE else "The first"
        assert first in flat(pages[heading]), lines
        moved += heading > 0
    assert moved, "the filler never pushed the heading to a second page"
