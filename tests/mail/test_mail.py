"""Mail goes through a real SMTP server on 127.0.0.1, or is stored when none is set."""
from __future__ import annotations

import socket


from inspect_app.extensions import db
from inspect_app.mail import services as mail


def test_message_is_sent_with_its_attachment(app, smtp_server):
    received = smtp_server
    message = mail.send(["applicant@example.org", "dpw@example.org"], "Inspection report", "See attached.",
                        [mail.Attachment("report.pdf", b"%PDF-1.4 test")])
    db.session.commit()
    assert message.sent_at is not None and message.error is None
    assert len(received) == 1
    got = received[0]
    assert got["Subject"] == "Inspection report"
    assert "applicant@example.org" in got["To"]
    parts = [p for p in got.walk() if p.get_filename()]
    assert [p.get_filename() for p in parts] == ["report.pdf"]
    assert parts[0].get_payload(decode=True) == b"%PDF-1.4 test"


def test_without_smtp_the_message_is_stored_and_shown_to_admins(app, make, signed_in):
    app.config.update(SMTP_HOST=None)
    mail.send(["owner@example.org"], "Stop-work order", "Stop all work.", permit_id=make.permit().id)
    db.session.commit()
    page = signed_in(make.user("admin")).get("/mail/")
    assert page.status_code == 200
    assert "Stop-work order" in page.text and "owner@example.org" in page.text
    assert signed_in(make.user("agent")).get("/mail/").status_code == 403


def test_unreachable_server_keeps_the_message_with_its_error(app):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    app.config.update(SMTP_HOST="127.0.0.1", SMTP_PORT=port)
    message = mail.send(["a@example.org"], "Subject", "Body")
    db.session.commit()
    assert message.sent_at is None
    assert "ConnectionRefusedError" in message.error
