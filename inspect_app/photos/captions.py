"""Photo captions: what a photo shows, in the inspector's words. Pure Python, like photos/markup.py beside it.

One limit for every caption (the upload form, the caption edit, the report form's photos), and the one reader of
the captions the report form sends with photos not stored yet (its `photos_caption` field): by the SHA-256 of
each original, the name a photo has whether its file is posted at once or uploaded first from the outbox.
"""
from __future__ import annotations

import json

from inspect_app.photos.markup import MAX_MARKED_PHOTOS, SHA256

CAPTION_MAX = 2000
# Photos one form may send with captions before they are stored: as many as it may send marked up.
MAX_CAPTIONED_PHOTOS = MAX_MARKED_PHOTOS


class CaptionRefused(ValueError):
    """The captions sent are not ones we store; the message says why, in words for the inspector."""


def too_long(length: int) -> str:
    """The one message for a caption over the limit."""
    return f"A caption is at most {CAPTION_MAX:,} characters; this one has {length:,}. Shorten it."


def parse_photo_captions(text: str | None) -> dict[str, str]:
    """The captions typed for photos sent with a form before they were stored (the report form's
    `photos_caption`): a JSON object from each photo's SHA-256 (of its original file) to its caption. Nothing
    sent: none; an empty caption is no caption. CaptionRefused if bad."""
    if text is None or not text.strip():
        return {}
    if len(text) > (CAPTION_MAX + 100) * MAX_CAPTIONED_PHOTOS:
        raise CaptionRefused(f"The captions are too long: at most {MAX_CAPTIONED_PHOTOS} photos, each with a caption "
                             f"of at most {CAPTION_MAX:,} characters.")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise CaptionRefused("The captions of the photos are not readable (not a JSON object).") from None
    if not isinstance(data, dict) or len(data) > MAX_CAPTIONED_PHOTOS:
        raise CaptionRefused(f"The captions must name at most {MAX_CAPTIONED_PHOTOS} photos by their SHA-256.")
    if not all(isinstance(sha, str) and SHA256.fullmatch(sha) for sha in data):
        raise CaptionRefused("A caption names its photo by the SHA-256 of the file (64 hexadecimal digits).")
    captions = {}
    for sha, caption in data.items():
        if not isinstance(caption, str):
            raise CaptionRefused("A caption is text.")
        caption = caption.strip()
        if any(ord(c) < 32 and c not in "\n\t" or ord(c) == 127 for c in caption):
            raise CaptionRefused("A caption is text: it holds a control character (a NUL, say) that is not.")
        if len(caption) > CAPTION_MAX:
            raise CaptionRefused(too_long(len(caption)))
        if caption:
            captions[sha] = caption
    return captions
