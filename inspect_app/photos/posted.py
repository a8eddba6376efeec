"""Photos posted with a form: the files themselves, or (sent again from a device's outbox) the SHA-256 of
originals the device uploaded first to /sync/blobs, in resumable chunks."""
from __future__ import annotations

import hashlib
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, BinaryIO, ContextManager

from flask import request

from inspect_app.accounts.policy import usable_blob
from inspect_app.permits.models import Permit
from inspect_app.photos.models import Photo
from inspect_app.photos.processing import PhotoRejected
from inspect_app.photos.services import blob_store, store_photo, store_photo_from_blob

# The one answer to an original not uploaded and to one that is not the sender's (`usable_blob`): the same
# words and status, so a form tells nobody which files are stored.
NOT_UPLOADED = "A photo did not finish uploading from the device; send the form again."


@dataclass(frozen=True)
class Sent:
    """A photo sent with a form or an operation: an uploaded file's stream, or the SHA-256 of an original the
    device uploaded first (to /sync/blobs)."""

    stream: BinaryIO | None = None
    sha256: str | None = None


def sent_under(name: str) -> list[Sent]:
    """The photos posted under `name` (files) and `name`_sha256 (uploaded originals), files first."""
    sent = [Sent(stream=upload.stream) for upload in request.files.getlist(name) if upload and upload.filename]
    return sent + [Sent(sha256=sha) for sha in request.form.getlist(f"{name}_sha256")]


def sent_sha256(sent: Sent) -> str:
    """The SHA-256 of a sent photo's original: named by the device, or read from the file (and rewound)."""
    if sent.sha256 is not None:
        return sent.sha256
    sent.stream.seek(0)
    digest = hashlib.file_digest(sent.stream, "sha256").hexdigest()
    sent.stream.seek(0)
    return digest


def store_sent(actor, permit: Permit, sent: Sent, **target: Any) -> Photo:
    """Store one sent photo. Raises PhotoRejected (a file that is no photo, or an upload that never finished
    or is not the actor's to use) or PhotoRefused."""
    if sent.stream is not None:
        return store_photo(actor, permit, sent.stream, **target)
    if not usable_blob(actor, sent.sha256, blob_store()):
        raise PhotoRejected(NOT_UPLOADED)
    return store_photo_from_blob(actor, permit, sent.sha256, **target)


def store_posted(actor, permit: Permit, name: str, **target: Any) -> list[Photo]:
    """Store the photos posted under `name` (files) and `name`_sha256 (uploaded originals); see `store_sent`."""
    return [store_sent(actor, permit, sent, **target) for sent in sent_under(name)]


def uploaded_original(actor, sha: str | None) -> ContextManager[BinaryIO | None]:
    """The original a device uploaded first (`<field>_sha256` posted instead of the file), opened; or None."""
    if not sha:
        return nullcontext(None)
    store = blob_store()
    if not usable_blob(actor, sha, store):
        raise PhotoRejected(NOT_UPLOADED)
    return store.open(sha)
