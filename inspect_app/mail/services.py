"""Sending mail: every message is stored; with an SMTP host set it is also sent, once the change that caused it
is committed.

With no SMTP host (the embedded default) messages stay on the *sent mail* page for admins.
A failed send is kept with its error, never lost, and never fails the change that caused it. A change that is not
committed (refused, rolled back, its commit failed) sends nothing: no one is told of what the record does not hold
(a stop-work order whose commit failed was mailed to the permittee, and mailed again when the agent tried again).

A secret in a message (a set-password link: whoever follows it chooses the account's password) is kept only
while the page is how the message reaches its reader, with no SMTP host. Where a mail server is set, the stored
copy says the link went by mail: an admin reading the page cannot take over the account under its owner's name.
"""
from __future__ import annotations

import logging
import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate, make_msgid, parseaddr

from flask import current_app
from sqlalchemy import event, update
from sqlalchemy import inspect as sa_inspect
from sqlalchemy.orm import Session

from inspect_app.extensions import db
from inspect_app.mail.models import OutboundEmail
from inspect_app.types import utcnow


@dataclass(frozen=True)
class Attachment:
    filename: str
    content: bytes
    mimetype: str = "application/pdf"


SECRET_NOT_KEPT = "[sent by mail only: not kept here]"
log = logging.getLogger(__name__)


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
    db.session.flush()
    if host and recipients:
        config = current_app.config
        waiting = _Delivery(message, _Server(host, config["SMTP_PORT"], config.get("SMTP_SECURITY") or "none",
                                             config.get("SMTP_USERNAME"), config.get("SMTP_PASSWORD")),
                            config["MAIL_FROM"], recipients, subject, body, tuple(attachments))
        db.session.info.setdefault(_WAITING, []).append(waiting)
    return message


_WAITING = "mail.waiting"  # in a session's info: the messages to deliver once its transaction is committed


@dataclass(frozen=True)
class _Server:
    host: str
    port: int
    security: str  # "starttls", "ssl" or "none" (config.py)
    username: str | None
    password: str | None


@dataclass(frozen=True)
class _Delivery:
    message: OutboundEmail
    server: _Server
    sender: str
    recipients: list[str]
    subject: str
    body: str
    attachments: tuple[Attachment, ...]


@event.listens_for(Session, "after_commit")
def _deliver_committed(session: Session) -> None:
    """Deliver the messages the committed transaction stored, and note on each, in a transaction of its own,
    when it was sent or why it was not. A message stored in a savepoint rolled back since is not delivered."""
    waiting = session.info.pop(_WAITING, None)
    if not waiting:
        return
    for delivery in waiting:
        state = sa_inspect(delivery.message)
        if not state.persistent:
            continue
        # The change is committed: nothing here may fail it, nor stop the messages after this one.
        try:
            _deliver(delivery)
        except Exception as error:  # noqa: BLE001  (a refused connection, a header the mail package refuses...)
            outcome = {"error": f"{type(error).__name__}: {error}"[:2000]}
        else:
            outcome = {"sent_at": utcnow()}
        try:
            with session.get_bind().begin() as connection:
                connection.execute(update(OutboundEmail).where(OutboundEmail.id == state.identity[0])
                                   .values(**outcome))
        except Exception:  # noqa: BLE001  (the database busy: the message stays as stored, its outcome unsaid)
            log.exception("the outcome of message %s was not recorded", state.identity[0])


@event.listens_for(Session, "after_soft_rollback")
def _drop_uncommitted(session: Session, previous_transaction) -> None:
    if previous_transaction.parent is None:  # the whole transaction (a savepoint's messages are told apart above)
        session.info.pop(_WAITING, None)


def _deliver(delivery: _Delivery) -> None:
    email = EmailMessage()
    email["From"] = delivery.sender
    email["To"] = ", ".join(delivery.recipients)
    email["Subject"] = delivery.subject
    # What receiving servers expect of a message (some refuse one without them).
    email["Date"] = formatdate(localtime=False, usegmt=True)
    email["Message-ID"] = make_msgid(domain=parseaddr(delivery.sender)[1].rpartition("@")[2] or None)
    email.set_content(delivery.body)
    for attachment in delivery.attachments:
        maintype, subtype = attachment.mimetype.split("/", 1)
        email.add_attachment(attachment.content, maintype=maintype, subtype=subtype,
                             filename=attachment.filename)
    server = delivery.server
    tls = ssl.create_default_context() if server.security in ("ssl", "starttls") else None
    smtp = (smtplib.SMTP_SSL(server.host, server.port, timeout=10, context=tls) if server.security == "ssl"
            else smtplib.SMTP(server.host, server.port, timeout=10))
    with smtp:
        if server.security == "starttls":
            smtp.starttls(context=tls)
        if server.username:
            smtp.login(server.username, server.password or "")
        smtp.send_message(email)
