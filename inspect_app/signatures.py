"""A drawn signature: the PNG the signature pad draws, posted as a data URL by a form or uploaded as a blob by
a device, checked one way for every signature the record keeps (an inspection report's, its permittee
signatory's, an O&M certification's).

There were two decoders, with different limits; this keeps the stricter: at most 512 KiB, a PNG no side of
which passes 4000 pixels, and some ink on it (an untouched pad is no signature).
"""
from __future__ import annotations

import base64
import binascii
import io
import struct

from PIL import Image, UnidentifiedImageError

DATA_URL_PREFIX = "data:image/png;base64,"
MAX_BYTES = 512 * 1024
MAX_SIDE = 4000
# Pixels that are neither transparent nor near-white: a stroke of the pen leaves far more than this.
MIN_INK_PIXELS = 30

NOT_FROM_THE_PAD = "The signature must be drawn on the pad (a PNG image)."
UNREADABLE = "The signature image is damaged and could not be read; clear it and sign again."
TOO_LARGE = "The signature image is too large; clear it and sign again."
EMPTY = "The signature pad is empty: sign with your finger or a stylus."


class SignatureRefused(ValueError):
    """Not a signature as the pad draws it; the message says why, in words for the signer."""


def from_data_url(data_url: str) -> bytes:
    """The PNG bytes of a signature posted as a data URL; SignatureRefused if it is not one."""
    if not data_url.startswith(DATA_URL_PREFIX):
        raise SignatureRefused(NOT_FROM_THE_PAD)
    try:
        png = base64.b64decode(data_url[len(DATA_URL_PREFIX):], validate=True)
    except (binascii.Error, ValueError):
        raise SignatureRefused(UNREADABLE) from None
    return checked(png)


def checked(png: bytes) -> bytes:
    """`png` if it is a signature as the pad draws it (a PNG with some ink); SignatureRefused if not."""
    if len(png) > MAX_BYTES:
        raise SignatureRefused(TOO_LARGE)
    try:
        with Image.open(io.BytesIO(png)) as image:
            if image.format != "PNG" or max(image.size) > MAX_SIDE:
                raise SignatureRefused("The signature must be a PNG image from the pad.")
            image.load()
            ink = _ink_pixels(image)
    except SignatureRefused:
        raise
    # What Pillow raises on a damaged or hostile PNG: a text or colour-profile chunk that inflates past its
    # limit is a ValueError ("Decompressed data too large"), a cut-off one EOFError or struct.error.
    except (UnidentifiedImageError, OSError, SyntaxError, EOFError, ValueError, struct.error,
            Image.DecompressionBombError):
        raise SignatureRefused(UNREADABLE) from None
    if ink < MIN_INK_PIXELS:
        raise SignatureRefused(EMPTY)
    return png


def _ink_pixels(image: Image.Image) -> int:
    """How many pixels carry ink: not transparent and not white."""
    rgba = image.convert("RGBA")
    on_white = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba).convert("L")
    return sum(count for level, count in enumerate(on_white.histogram()) if level < 200)
