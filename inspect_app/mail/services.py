"""Sending mail: every message is stored; with an SMTP host set it is also sent.

With no SMTP host (the embedded default) messages stay on the *sent mail* page for admins.
A failed send is kept with its error, never lost, and never fails the change that caused it.

A secret in a message (a set-password link: whoever follows it chooses the account's password) is kept only
while the page is how the message reaches its reader, with no SMTP host. Where a mail server is set, the stored
copy says the link went by mail: an admin reading the page cannot take over the account under its owner's name.
"""
from __future__ import annotations

import smtplib
from dataclasses import dataclass
from email.message import EmailMessage

from flask import current_app

from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail
from inspect_app.types import utcnow


@dataclass(frozen=True)
class Attachment:
    filename: str
    content: bytes
    mimetype: str = "application/pdf"


SECRET_NOT_KEPT = "[sent by mail only: not kept here]"


def send(to: list[str], subject: str, body: str, attachments: list[Attachment] = (),
         permit_id: str | None = None, secrets: tuple[str, ...] = ()) -> OutboundEmail:
    """Store a message and, when SMTP is configured, send it now; `secrets` (texts of `body`) are then left out
    of the stored copy (see the module's docstring). A send that fails keeps no secret either: its sender
    sends a new one (a new link), as for a message lost on its way."""
    recipients = sorted({address.strip() for address in to if address and address.strip()})
    host = current_app.config.get("SMTP_HOST")
    kept = body
    for secret in secrets if host else ():
        kept = kept.replace(secret, SECRET_NOT_KEPT)
    message = OutboundEmail(to=recipients, subject=subject, body=kept, permit_id=permit_id,
                            attachment_names=[a.filename for a in attachments])
    db.session.add(message)
    if host and recipients:
        try:
            _deliver(host, current_app.config["SMTP_PORT"], recipients, subject, body, attachments)
        except (OSError, smtplib.SMTPException) as error:
            message.error = f"{type(error).__name__}: {error}"
        else:
            message.sent_at = utcnow()
    db.session.flush()
    return message


def _deliver(host: str, port: int, recipients: list[str], subject: str, body: str,
             attachments) -> None:
    email = EmailMessage()
    email["From"] = current_app.config["MAIL_FROM"]
    email["To"] = ", ".join(recipients)
    email["Subject"] = subject
    email.set_content(body)
    for attachment in attachments:
        maintype, subtype = attachment.mimetype.split("/", 1)
        email.add_attachment(attachment.content, maintype=maintype, subtype=subtype,
                             filename=attachment.filename)
    with smtplib.SMTP(host, port, timeout=10) as smtp:
        smtp.send_message(email)
