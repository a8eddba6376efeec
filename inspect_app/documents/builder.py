"""A small PDF builder: plain data in, PDF bytes out (reportlab platypus).

The documents the town keeps (inspection report, notice of violation and stop-work order, certificate of
completion, O&M certification, permit history) are described as a `Document` of blocks and rendered by
`render`. The builder never reads the clock or the database, so the same data gives the same bytes.
reportlab is imported by the first render (`_reportlab`), not with this module (issue 18).
"""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Union
from xml.sax.saxutils import escape

from PIL import Image as PILImage
from PIL import UnidentifiedImageError

if TYPE_CHECKING:
    from reportlab.pdfgen.canvas import Canvas
    from reportlab.platypus import Flowable
    from reportlab.platypus import Table as RLTable

CREATOR = "stormwater-inspect documents"

# US Letter (8.5 x 11 inches, in points): the paper Massachusetts town offices file and record.
PAGE_WIDTH, PAGE_HEIGHT = 8.5 * 72, 11 * 72
SIDE_MARGIN = 54.0
TOP_MARGIN = 72.0  # header lives in this band
BOTTOM_MARGIN = 72.0  # footer (and the record hash on the last page) live in this band
FRAME_WIDTH = PAGE_WIDTH - 2 * SIDE_MARGIN
FRAME_HEIGHT = PAGE_HEIGHT - TOP_MARGIN - BOTTOM_MARGIN

# Photo cells: the image box is this fraction of the cell's inner width tall, so two columns give three
# rows (six photos) to a page.
PHOTO_BOX_RATIO = 0.625
CELL_PADDING = 6.0

_SHA256_HEX = re.compile(r"[0-9a-f]{64}")



class DocumentError(ValueError):
    """The data given to `render` cannot make a document; the message says which part and why."""


@dataclass(frozen=True)
class Heading:
    """A section heading; level 1 or 2."""

    text: str
    level: int = 1


@dataclass(frozen=True)
class Fields:
    """Label/value pairs shown as a two-column table; long values wrap and may break across pages."""

    items: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Paragraphs:
    """Free text; a blank line starts a new paragraph, a single newline breaks the line."""

    text: str


@dataclass(frozen=True)
class Table:
    """A table whose header row repeats on every page it spans; col_widths are fractions of the width."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    col_widths: tuple[float, ...] | None = None


@dataclass(frozen=True)
class Photo:
    """A photo's display rendition (JPEG bytes, embedded as is) with its caption and EXIF time."""

    jpeg: bytes
    caption: str
    taken_at_text: str = ""


@dataclass(frozen=True)
class PhotoGrid:
    """Photos laid out in a grid, a whole row to a page at least."""

    photos: tuple[Photo, ...]
    columns: int = 2


@dataclass(frozen=True)
class SignatureBlock:
    """Who signs, in what capacity, what they certify and when; the drawn signature if there is one."""

    name: str
    credentials: str
    statement: str
    signed_at_text: str
    signature_png: bytes | None = None


Block = Union[Heading, Fields, Paragraphs, Table, PhotoGrid, SignatureBlock]


@dataclass(frozen=True)
class Document:
    """A whole document: who made it, whose record keeps it, for which permit, from which record, its blocks.

    `town` and `authority` are the record the document is kept in. `made_by` names who made it when that is
    not the town itself (an engineer's report, an owner's certification); None: the town issued it.
    """

    title: str
    town: str
    authority: str
    permit_number: str
    record_sha256: str
    blocks: tuple[Block, ...] = field(default_factory=tuple)
    made_by: str | None = None
    # A frozen document carries its id and where anyone can verify it (printed, and as a QR code).
    document_id: str | None = None
    verify_url: str | None = None
    # A report of the present says when it was made ("Generated May 3, 2026 10:15 AM EDT").
    generated_text: str | None = None

    @property
    def record_of(self) -> str:
        """Whose record keeps the document: "Town of Longmeadow, Department of Public Works"."""
        return f"{self.town}, {self.authority}"

    @property
    def maker(self) -> str:
        """Who made the document (the PDF's author): its maker, or the town that issued it."""
        return self.made_by or self.record_of

    @property
    def provenance(self) -> str:
        """Who made it and whose record keeps it, in words: "Made by ... for the record of the Town of ..."."""
        if self.made_by:
            return f"Made by {self.made_by}; kept in the record of the {self.record_of}"
        return f"Issued by the {self.record_of}, from its record"


def render(doc: Document) -> bytes:
    """Render `doc` to PDF bytes; the same `doc` always gives the same bytes."""
    rl = _reportlab()
    if not _SHA256_HEX.fullmatch(doc.record_sha256 or ""):
        raise DocumentError("record_sha256 must be 64 lowercase hexadecimal characters")
    story: list[Flowable] = [
        rl.Paragraph(_markup(doc.title), rl.STYLES["title"]),
        rl.Paragraph(_markup(f"{doc.provenance} · Permit {doc.permit_number}"), rl.STYLES["subtitle"]),
    ]
    story += _story(doc.blocks)

    # Binary streams, not ASCII85: reportlab's pure-Python ASCII85 encoder takes seconds over 24 photos and
    # grows them by a quarter. Set on every render because it is read at the moment each stream is made.
    rl.rl_config.useA85 = 0
    out = _PdfSink()
    template = rl.BaseDocTemplate(
        out,
        pagesize=(PAGE_WIDTH, PAGE_HEIGHT),
        leftMargin=SIDE_MARGIN,
        rightMargin=SIDE_MARGIN,
        topMargin=TOP_MARGIN,
        bottomMargin=BOTTOM_MARGIN,
        # Invariant mode: fixed dates and document id, so one record gives one byte sequence.
        invariant=1,
        title=_plain(f"{doc.title} - Permit {doc.permit_number}"),
        author=_plain(doc.maker),
        subject=f"Record SHA-256: {doc.record_sha256}",
        keywords=[f"document-id={doc.document_id}", f"record-sha256={doc.record_sha256}",
                  f"verify={doc.verify_url}"] if doc.document_id else "",
        creator=CREATOR,
        producer=CREATOR,
    )
    frame = rl.Frame(SIDE_MARGIN, BOTTOM_MARGIN, FRAME_WIDTH, FRAME_HEIGHT, id="body",
                     leftPadding=0, rightPadding=0, topPadding=0, bottomPadding=0)
    template.addPageTemplates([rl.PageTemplate(id="page", frames=[frame])])
    template.build(story, canvasmaker=functools.partial(rl.NumberedCanvas, document=doc))
    pdf, out.pdf = out.pdf, b""  # reportlab keeps `out` in reference cycles: hand the PDF over, keep no copy
    return pdf


@functools.cache
def _reportlab() -> SimpleNamespace:
    """reportlab, and this builder's styles and flowables made of it, as `rl.<name>`.

    Imported on the first render, not with this module: the app loads this module at start-up (a signed
    record's PDF is frozen before commit, documents/services.py), and an app server's worker that renders
    no document need not hold reportlab (about 6 MB, issue 18). A worker that renders one keeps it.
    """
    # Third-party imports in a function, on purpose (above).
    from reportlab import rl_config  # noqa: PLC0415
    from reportlab.graphics.barcode import qrencoder  # noqa: PLC0415
    from reportlab.lib import colors  # noqa: PLC0415
    from reportlab.lib.enums import TA_LEFT  # noqa: PLC0415
    from reportlab.lib.styles import ParagraphStyle  # noqa: PLC0415
    from reportlab.lib.utils import ImageReader  # noqa: PLC0415
    from reportlab.pdfbase.pdfmetrics import stringWidth  # noqa: PLC0415
    from reportlab.pdfgen.canvas import Canvas  # noqa: PLC0415
    from reportlab.platypus import (  # noqa: PLC0415
        BaseDocTemplate,
        CondPageBreak,
        Flowable,
        Frame,
        KeepTogether,
        PageTemplate,
        Paragraph,
        Spacer,
        TableStyle,
    )
    from reportlab.platypus import Table as RLTable  # noqa: PLC0415

    base = ParagraphStyle("base", fontName="Helvetica", fontSize=9.5, leading=12, alignment=TA_LEFT)
    STYLES = {
        "title": ParagraphStyle("title", base, fontName="Helvetica-Bold", fontSize=16, leading=20),
        "subtitle": ParagraphStyle("subtitle", base, textColor=colors.HexColor("#444444"), spaceAfter=10),
        "h1": ParagraphStyle("h1", base, fontName="Helvetica-Bold", fontSize=12.5, leading=16, spaceBefore=10,
                             spaceAfter=4),
        "h2": ParagraphStyle("h2", base, fontName="Helvetica-Bold", fontSize=10.5, leading=14, spaceBefore=6,
                             spaceAfter=3),
        "body": ParagraphStyle("body", base, spaceAfter=6),
        "label": ParagraphStyle("label", base, fontName="Helvetica-Bold"),
        "cell": base,
        "header_cell": ParagraphStyle("header_cell", base, fontName="Helvetica-Bold"),
        "caption": ParagraphStyle("caption", base, fontSize=8.5, leading=10.5),
        "taken_at": ParagraphStyle("taken_at", base, fontSize=7.5, leading=9.5,
                                   textColor=colors.HexColor("#555555")),
    }
    GRID_LINE = colors.HexColor("#999999")
    LABEL_FILL = colors.HexColor("#EEEEEE")

    class PhotoBox(Flowable):
        """A fixed box with the photo scaled to fit inside it, aspect ratio kept, centred at the top."""

        def __init__(self, source: _JpegSource, pixel_size: tuple[int, int], width: float, height: float) -> None:
            super().__init__()
            self.source, self.pixel_size = source, pixel_size
            self.width, self.height = width, height

        def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
            return self.width, self.height

        def draw(self) -> None:
            pixels_wide, pixels_high = self.pixel_size
            scale = min(self.width / pixels_wide, self.height / pixels_high)
            drawn_width, drawn_height = pixels_wide * scale, pixels_high * scale
            self.canv.drawImage(self.source, (self.width - drawn_width) / 2, self.height - drawn_height,
                                drawn_width, drawn_height)

    class SignatureImage(Flowable):
        """The drawn signature (PNG, transparency kept)."""

        def __init__(self, png: bytes, width: float, height: float) -> None:
            super().__init__()
            self.png, self.width, self.height = png, width, height

        def wrap(self, available_width: float, available_height: float) -> tuple[float, float]:
            return self.width, self.height

        def draw(self) -> None:
            self.canv.drawImage(ImageReader(io.BytesIO(self.png)), 0, 0, self.width, self.height, mask="auto")

    class NumberedCanvas(Canvas):
        """Holds pages back until the end so each can say "Page x of y" and the last can carry the hash."""

        def __init__(self, *args: object, document: Document, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)
            self._document = document
            self._held_pages: list[dict] = []

        def showPage(self) -> None:
            self._held_pages.append(dict(self.__dict__))
            self._startPage()

        def save(self) -> None:
            total = len(self._held_pages)
            for number, state in enumerate(self._held_pages, 1):
                self.__dict__.update(state)
                _draw_furniture(self, self._document, number, total)
                super().showPage()
            super().save()
            # The pages refer to each other and to the canvas: free them now, not at a full collection.
            self._held_pages.clear()

    return SimpleNamespace(**locals())  # every name above


class _PdfSink:
    """Takes the finished PDF from reportlab's single write as it is; a BytesIO would copy all of it."""

    def __init__(self) -> None:
        self.pdf = b""

    def write(self, data: bytes) -> int:
        self.pdf = data
        return len(data)


# ---------------------------------------------------------------------------------------------------------
# Text: every user string goes through _markup (for Paragraph), _draw (for the canvas) or _plain (the metadata).

# The built-in fonts show Windows-1252; the rest of a name or a note ("Łukasz", "Đặng Thị Hương", "Ελένη") is set
# in DejaVu Sans (documents/fonts, its licence beside it), registered the first time a document needs it, and
# embedded (the glyphs used) in that document alone.
FONTS = Path(__file__).with_name("fonts")
WIDE, WIDE_BOLD = "DejaVuSans", "DejaVuSans-Bold"


def _runs(text: object, wide: bool = True) -> list[tuple[str, bool]]:
    """User text as runs of (characters, whether they are set in the wide font): control characters dropped; a
    character outside Windows-1252 kept for the wide font where it has it (`wide`), otherwise its base letter
    (ą → a) or "?" (an emoji, CJK)."""
    text = unicodedata.normalize("NFC", "" if text is None else str(text)).replace("\r\n", "\n").replace("\t", " ")
    runs: list[tuple[str, bool]] = []
    for char in text:
        if char == "\n" or _encodable(char):
            piece, in_wide = char, False
        elif unicodedata.category(char) in ("Cc", "Cf", "Cs"):
            continue  # invisible or invalid: nothing a reader would miss
        elif wide and _in_wide_font(char):
            piece, in_wide = char, True
        else:
            base = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
            piece, in_wide = (base if base and all(_encodable(c) for c in base) else "?"), False
        if runs and runs[-1][1] == in_wide:
            runs[-1] = (runs[-1][0] + piece, in_wide)
        else:
            runs.append((piece, in_wide))
    return runs


def _plain(text: object) -> str:
    """Text the built-in fonts can show alone (the PDF's title and author)."""
    return "".join(piece for piece, _ in _runs(text, wide=False))


@functools.cache
def _encodable(char: str) -> bool:
    if unicodedata.category(char) == "Cc":
        return False
    try:
        char.encode("cp1252")
    except UnicodeEncodeError:
        return False
    return True


@functools.cache
def _wide_glyphs() -> frozenset[int]:
    """The code points DejaVu Sans has, once its two weights are registered with reportlab."""
    from reportlab.pdfbase import pdfmetrics  # noqa: PLC0415  (reportlab on first need: _reportlab)
    from reportlab.pdfbase.ttfonts import TTFont  # noqa: PLC0415

    regular = TTFont(WIDE, str(FONTS / "DejaVuSans.ttf"))
    pdfmetrics.registerFont(regular)
    pdfmetrics.registerFont(TTFont(WIDE_BOLD, str(FONTS / "DejaVuSans-Bold.ttf")))
    pdfmetrics.registerFontFamily(WIDE, normal=WIDE, bold=WIDE_BOLD, italic=WIDE, boldItalic=WIDE_BOLD)
    return frozenset(regular.face.charToGlyph)


@functools.cache
def _in_wide_font(char: str) -> bool:
    return ord(char) in _wide_glyphs()


def _markup(text: object) -> str:
    """Paragraph markup for user text: escaped, so `<font size=80>` prints as those characters."""
    return "".join(f'<font name="{WIDE}">{escape(piece)}</font>' if wide else escape(piece)
                   for piece, wide in _runs(text)).replace("\n", "<br/>")


# ---------------------------------------------------------------------------------------------------------
# Blocks

def _story(blocks: tuple[Block, ...]) -> list[Flowable]:
    """The blocks' flowables, laid out so that a signature never starts a page alone (it takes the end of what it
    signs along: the last row, paragraph or photo row before it) and no heading is left at the foot of a page
    (it moves on with the start of what follows it)."""
    rl = _reportlab()
    groups: list[list[Flowable]] = []
    for index, block in enumerate(blocks, 1):
        if isinstance(block, SignatureBlock) and groups:
            head, tail = _split_tail(blocks[index - 2], index - 1, groups[-1])
            groups[-1] = head
            groups.append([rl.KeepTogether([*tail, *_signature(block, index)])])
        elif isinstance(block, SignatureBlock):
            groups.append([rl.KeepTogether(_signature(block, index))])
        else:
            groups.append(_flowables(block, index))
    story: list[Flowable] = []
    follows = 0.0  # the least height that must follow on the page for what comes after to start there
    for block, group in reversed(list(zip(blocks, groups))):
        if isinstance(block, Heading) and group:
            follows = min(_height(group[0]) + follows, FRAME_HEIGHT / 2)
            group = [rl.CondPageBreak(follows), *group]
        elif group:
            follows = _lead(group)
        story[:0] = group
    return story


def _split_tail(block: Block, index: int, group: list[Flowable]) -> tuple[list[Flowable], list[Flowable]]:
    """`block`'s flowables as (head, tail): the tail is its last row, paragraph or photo row, which a signature
    after it keeps on its page."""
    rl = _reportlab()
    if isinstance(block, Fields) and len(block.items) > 1:
        return ([_fields_table(Fields(block.items[:-1]))],
                [_fields_table(Fields(block.items[-1:])), rl.Spacer(1, 6)])
    if isinstance(block, Table) and len(block.rows) > 1:
        return ([_data_table(block, index, block.rows[:-1])],
                [_data_table(block, index, block.rows[-1:], header=False), rl.Spacer(1, 6)])
    if isinstance(block, (Paragraphs, PhotoGrid)):
        return group[:-1], group[-1:]
    if isinstance(block, SignatureBlock):  # two signatures stay together
        return [], [part for flowable in group for part in flowable._content]
    return [], group


def _height(flowable: Flowable) -> float:
    """The height `flowable` takes on a page, with the space its style sets around it."""
    style = getattr(flowable, "style", None)
    around = (style.spaceBefore + style.spaceAfter) if style is not None else 0
    return flowable.wrap(FRAME_WIDTH, FRAME_HEIGHT)[1] + around


def _lead(group: list[Flowable]) -> float:
    """The least height of `group` that must fit below a heading for the heading not to stand alone: a table's
    header and the start of its first row, a photo row or a signature whole, a paragraph's first two lines."""
    rl = _reportlab()
    for flowable in group:
        if isinstance(flowable, rl.RLTable):
            flowable.wrap(FRAME_WIDTH, FRAME_HEIGHT)
            rows, header = flowable._rowHeights, flowable.repeatRows
            if getattr(flowable, "whole", False):
                return sum(rows)
            return sum(rows[:header]) + (min(rows[header], 2 * _MIN_ROW_SPLIT) if len(rows) > header else 0)
        if isinstance(flowable, rl.KeepTogether):
            return sum(_height(part) for part in flowable._content)
        if isinstance(flowable, rl.Paragraph):
            return min(_height(flowable), 2 * flowable.style.leading + flowable.style.spaceBefore)
        if not isinstance(flowable, rl.CondPageBreak):
            return _height(flowable)
    return 0.0


def _flowables(block: Block, index: int) -> list[Flowable]:
    rl = _reportlab()
    if isinstance(block, Heading):
        style = rl.STYLES["h1" if block.level <= 1 else "h2"]
        return [rl.Paragraph(_markup(block.text), style)]
    if isinstance(block, Fields):
        return [_fields_table(block), rl.Spacer(1, 6)]
    if isinstance(block, Paragraphs):
        # Split on the text as written (_markup sets what the built-in fonts lack in DejaVu Sans, as for a field).
        text = "" if block.text is None else str(block.text).replace("\r\n", "\n")
        parts = re.split(r"\n[ \t]*\n", text.strip())
        return [rl.Paragraph(_markup(part.strip()), rl.STYLES["body"]) for part in parts if part.strip()]
    if isinstance(block, Table):
        return [_data_table(block, index), rl.Spacer(1, 6)]
    if isinstance(block, PhotoGrid):
        return _photo_rows(block, index)
    raise DocumentError(f"block {index}: unknown block type {type(block).__name__}")


def _fields_table(block: Fields) -> RLTable:
    rl = _reportlab()
    rows = []
    for label, value in block.items:
        rows.append([rl.Paragraph(_markup(label), rl.STYLES["label"]),
                     rl.Paragraph(_markup(value), rl.STYLES["cell"])])
    if not rows:
        rows = [["", ""]]
    table = rl.RLTable(rows, colWidths=[FRAME_WIDTH * 0.32, FRAME_WIDTH * 0.68],
                    splitInRow=_MIN_ROW_SPLIT, hAlign="LEFT")
    table.setStyle(rl.TableStyle([
        ("GRID", (0, 0), (-1, -1), 0.5, rl.GRID_LINE),
        ("BACKGROUND", (0, 0), (0, -1), rl.LABEL_FILL),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]))
    return table


# A row taller than what is left of the page is split inside the row (long free text) only if each part
# keeps at least two lines; otherwise the row moves to the next page whole.
_MIN_ROW_SPLIT = 30


def _data_table(block: Table, index: int, rows: tuple[tuple[str, ...], ...] | None = None,
                header: bool = True) -> RLTable:
    """The table of `block` (of `rows` of it, when given; without its header row when not `header`)."""
    rl = _reportlab()
    width = len(block.header)
    if width == 0:
        raise DocumentError(f"block {index}: a table needs at least one column")
    for number, row in enumerate(block.rows, 1):
        if len(row) != width:
            raise DocumentError(f"block {index}: row {number} has {len(row)} cells, the header has {width}")
    fractions = block.col_widths or tuple(1.0 / width for _ in range(width))
    if len(fractions) != width or any(f <= 0 for f in fractions):
        raise DocumentError(f"block {index}: col_widths must give one positive fraction per column")
    total = sum(fractions)
    data = [[rl.Paragraph(_markup(h), rl.STYLES["header_cell"]) for h in block.header]] if header else []
    data += [[rl.Paragraph(_markup(cell), rl.STYLES["cell"]) for cell in row]
             for row in (block.rows if rows is None else rows)]
    table = rl.RLTable(data, colWidths=[FRAME_WIDTH * f / total for f in fractions], repeatRows=1 if header else 0,
                    splitInRow=_MIN_ROW_SPLIT, hAlign="LEFT")
    table.setStyle(rl.TableStyle([
        ("GRID", (0, 0), (-1, -1), 0.5, rl.GRID_LINE),
        *([("BACKGROUND", (0, 0), (-1, 0), rl.LABEL_FILL)] if header else []),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]))
    return table


class _JpegSource:
    """JPEG bytes handed to reportlab as they are: no decoding, no re-encoding (DCTDecode pass-through)."""

    def __init__(self, jpeg: bytes) -> None:
        self._jpeg = jpeg
        # reportlab names an image after str(source): the content hash keeps the name stable across runs.
        self._name = "jpeg-sha256:" + hashlib.sha256(jpeg).hexdigest()

    def jpeg_fh(self) -> io.BytesIO:
        return io.BytesIO(self._jpeg)

    def __str__(self) -> str:
        return self._name


def _photo_rows(block: PhotoGrid, index: int) -> list[Flowable]:
    rl = _reportlab()
    if not 1 <= block.columns <= 4:
        raise DocumentError(f"block {index}: a photo grid has 1 to 4 columns, not {block.columns}")
    cell_width = FRAME_WIDTH / block.columns
    inner_width = cell_width - 2 * CELL_PADDING
    box_height = inner_width * PHOTO_BOX_RATIO
    cells = []
    for number, photo in enumerate(block.photos, 1):
        size = _jpeg_size(photo.jpeg, f"block {index}, photo {number} ({_plain(photo.caption)[:60]!r})")
        taken = photo.taken_at_text.strip() or "time not recorded"
        cells.append([
            rl.PhotoBox(_JpegSource(photo.jpeg), size, inner_width, box_height),
            rl.Spacer(1, 3),
            rl.Paragraph(_markup(photo.caption), rl.STYLES["caption"]),
            rl.Paragraph(_markup(f"Taken: {taken}"), rl.STYLES["taken_at"]),
        ])
    rows: list[Flowable] = []
    for start in range(0, len(cells), block.columns):
        row = cells[start:start + block.columns]
        row += [""] * (block.columns - len(row))
        # One table per row: a row of photos never splits, so pages break between rows.
        table = rl.RLTable([row], colWidths=[cell_width] * block.columns, hAlign="LEFT")
        if table.wrap(FRAME_WIDTH, FRAME_HEIGHT)[1] > FRAME_HEIGHT:
            # Only a caption longer than a page gets here; let its text run on rather than fail.
            table = rl.RLTable([row], colWidths=[cell_width] * block.columns, hAlign="LEFT",
                            splitInRow=_MIN_ROW_SPLIT)
        table.whole = True  # never split: a heading before it keeps all of it in view (_lead)
        table.setStyle(rl.TableStyle([
            ("VALIGN", (0, 0), (-1, -1), "TOP"),
            ("LEFTPADDING", (0, 0), (-1, -1), CELL_PADDING),
            ("RIGHTPADDING", (0, 0), (-1, -1), CELL_PADDING),
            ("TOPPADDING", (0, 0), (-1, -1), CELL_PADDING),
            ("BOTTOMPADDING", (0, 0), (-1, -1), CELL_PADDING),
        ]))
        rows.append(table)
    return rows


def _jpeg_size(data: bytes, where: str) -> tuple[int, int]:
    """Pixel size of a JPEG, read from its header only; anything else is refused with a clear message."""
    try:
        with PILImage.open(io.BytesIO(data)) as image:
            if image.format != "JPEG":
                raise DocumentError(f"{where}: expected a JPEG display rendition, got {image.format}")
            return image.size
    except (UnidentifiedImageError, OSError) as error:
        raise DocumentError(f"{where}: not a readable JPEG image") from error


def _signature(block: SignatureBlock, index: int) -> list[Flowable]:
    """The statement, the drawn signature (or a blank line to sign) and the signer: kept on one page by `_story`,
    so the signature cannot be detached."""
    rl = _reportlab()
    parts: list[Flowable] = [
        rl.Paragraph(_markup(block.statement), rl.STYLES["body"]),
    ]
    if block.signature_png is not None:
        try:
            with PILImage.open(io.BytesIO(block.signature_png)) as image:
                if image.format != "PNG":
                    raise DocumentError(f"block {index}: the signature must be a PNG image, got {image.format}")
                pixels_wide, pixels_high = image.size
        except (UnidentifiedImageError, OSError) as error:
            raise DocumentError(f"block {index}: the signature is not a readable PNG image") from error
        scale = min(220 / pixels_wide, 60 / pixels_high)
        parts.append(rl.SignatureImage(block.signature_png, pixels_wide * scale, pixels_high * scale))
    else:
        parts.append(rl.Spacer(1, 40))
    line = rl.RLTable(
        [[rl.Paragraph(_markup(block.name), rl.STYLES["label"]),
          rl.Paragraph(_markup(block.signed_at_text), rl.STYLES["cell"])],
         [rl.Paragraph(_markup(block.credentials), rl.STYLES["cell"]),
          rl.Paragraph("Date signed", rl.STYLES["taken_at"])]],
        colWidths=[FRAME_WIDTH * 0.6, FRAME_WIDTH * 0.4], hAlign="LEFT",
    )
    line.setStyle(rl.TableStyle([
        ("LINEABOVE", (0, 0), (-1, 0), 0.75, rl.colors.black),
        ("LEFTPADDING", (0, 0), (-1, -1), 0),
        ("VALIGN", (0, 0), (-1, -1), "TOP"),
    ]))
    parts.append(line)
    return [rl.Spacer(1, 10), *parts]


# ---------------------------------------------------------------------------------------------------------
# Page furniture: drawn once the page count is known.

def _draw_furniture(canvas: Canvas, doc: Document, page: int, total: int) -> None:
    rl = _reportlab()
    left, right = SIDE_MARGIN, PAGE_WIDTH - SIDE_MARGIN
    canvas.saveState()
    canvas.setFillColor(rl.colors.black)
    canvas.setStrokeColor(rl.GRID_LINE)
    canvas.setLineWidth(0.5)

    # Header: who made it, whose record keeps it, and for which permit.
    permit_width = _draw(canvas, right, PAGE_HEIGHT - 36, f"Permit {doc.permit_number}", "Helvetica-Bold", 9,
                         FRAME_WIDTH * 0.45, right=True)
    maker = f"Made by {doc.made_by}" if doc.made_by else f"Issued by the {doc.record_of}"
    _draw(canvas, left, PAGE_HEIGHT - 36, maker, "Helvetica-Bold", 9, FRAME_WIDTH - permit_width - 12)
    _draw(canvas, left, PAGE_HEIGHT - 46, f"Record of the {doc.record_of}", "Helvetica", 7.5, FRAME_WIDTH)
    canvas.line(left, PAGE_HEIGHT - 51, right, PAGE_HEIGHT - 51)

    # Footer: the document and the page; the record's hash on the last page.
    canvas.line(left, 56, right, 56)
    canvas.setFont("Helvetica", 8)
    page_text = f"Page {page} of {total}"
    text_right = right - (QR_SIZE + 8 if doc.verify_url else 0)
    canvas.drawRightString(text_right, 44, page_text)
    title_width = text_right - left - rl.stringWidth(page_text, "Helvetica", 8) - 12
    _draw(canvas, left, 44, doc.title, "Helvetica", 8, title_width)
    if page == total:
        canvas.setFont("Courier", 7.5)
        canvas.drawString(left, 32, f"Record SHA-256: {doc.record_sha256}")
    if doc.document_id and doc.generated_text:
        # How a frozen version came to be, when not at signing (a record signed before documents were frozen).
        _draw(canvas, left, 60, doc.generated_text, "Helvetica-Oblique", 7, FRAME_WIDTH)
    if doc.document_id:
        # Every page names its document, so a page separated from the others can still be verified.
        canvas.setFont("Helvetica", 7)
        canvas.drawString(left, 20, f"Document {doc.document_id} · SHA-256 {doc.record_sha256[:16]}")
        if doc.verify_url:
            _draw(canvas, left, 11, f"Verify at {doc.verify_url}", "Helvetica", 7, text_right - left)
            # The code carries the whole record hash too: the page it opens says whether it is the register's.
            _draw_qr(canvas, f"{doc.verify_url}?sha256={doc.record_sha256}", right - QR_SIZE, 4)
    elif doc.generated_text:
        _draw(canvas, left, 20, doc.generated_text, "Helvetica", 7, FRAME_WIDTH)
    canvas.restoreState()


QR_SIZE = 48.0


QR_BORDER = 1  # modules of white around the code


@functools.lru_cache(maxsize=32)
def _qr_runs(url: str) -> tuple[int, tuple[tuple[int, int, int], ...]]:
    """The QR code of `url` (reportlab's encoder, error correction M) as its module count and its dark runs
    (row, column, length): encoded once per document, drawn on each of its pages."""
    rl = _reportlab()
    code = rl.qrencoder.QRCode(None, rl.qrencoder.QRErrorCorrectLevel.M)
    code.addData(url)
    code.make()
    runs = []
    for row_number, row in enumerate(code.modules):
        column = 0
        for dark, modules in itertools.groupby(map(bool, row)):
            length = len(list(modules))
            if dark:
                runs.append((row_number, column, length))
            column += length
    return code.getModuleCount(), tuple(runs)


def _draw_qr(canvas: Canvas, url: str, x: float, y: float) -> None:
    """A QR code of `url`, QR_SIZE points square, as one filled path."""
    count, runs = _qr_runs(url)
    box = QR_SIZE / (count + 2 * QR_BORDER)
    path = canvas.beginPath()
    for row, column, length in runs:
        path.rect(x + (column + QR_BORDER) * box, y + QR_SIZE - (row + QR_BORDER + 1) * box, length * box, box)
    canvas.setFillColorRGB(0, 0, 0)
    canvas.drawPath(path, stroke=0, fill=1)


def _draw(canvas: Canvas, x: float, y: float, text: object, font: str, size: float, width: float,
          right: bool = False) -> float:
    """One line of user text from `x` (ending at `x`, `right`), shortened with an ellipsis to stay within `width`
    points; what `font` cannot show is set in DejaVu Sans (`_runs`). Returns the width drawn."""
    rl = _reportlab()
    wide = WIDE_BOLD if "Bold" in font else WIDE
    runs = [(piece, wide if in_wide else font) for piece, in_wide in _runs(str(text or "").replace("\n", " "))]

    def measure() -> float:
        return sum(rl.stringWidth(piece, name, size) for piece, name in runs)

    if measure() > width:
        ellipsis = rl.stringWidth("…", font, size)
        while runs and measure() + ellipsis > width:
            piece, name = runs.pop()
            if piece[:-1]:
                runs.append((piece[:-1], name))
        runs.append(("…", font))
    drawn = measure()
    at = x - drawn if right else x
    for piece, name in runs:
        canvas.setFont(name, size)
        canvas.drawString(at, y, piece)
        at += rl.stringWidth(piece, name, size)
    return drawn
