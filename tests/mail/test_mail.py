"""Mail goes through a real SMTP server on 127.0.0.1, or is stored when none is set."""
from __future__ import annotations

import datetime as dt
import socket

import pytest


from inspect_app.extensions import db
from inspect_app.mail import services as mail
from inspect_app.mail.models import OutboundEmail


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


def test_a_message_is_delivered_once_its_change_is_committed_and_never_for_a_change_rolled_back(app, smtp_server):
    mail.send(["owner@example.org"], "Stop-work order", "Stop all work.")
    assert smtp_server == []  # nothing leaves while the change may still fail
    db.session.rollback()
    kept = mail.send(["owner@example.org"], "Stop-work order", "Stop all work.")
    savepoint = db.session.begin_nested()
    mail.send(["owner@example.org"], "Notice of violation", "A savepoint rolled back.")
    savepoint.rollback()
    db.session.commit()
    assert [m["Subject"] for m in smtp_server] == ["Stop-work order"]
    assert kept.sent_at is not None and kept.error is None


def test_a_stop_work_order_whose_commit_fails_is_mailed_to_no_one(s3_app, s3_settings, make, smtp_server):
    """The order's PDF is frozen as the change commits; the bucket is gone (the object store refuses it), so
    the commit fails: the record holds no order, and no one was told of one (the mail left before the commit,
    and again at the agent's next try)."""
    from sqlalchemy import func, select

    from inspect_app.enforcement import services as enforcement
    from inspect_app.enforcement.models import StopWorkOrder
    from tests.s3_server import bucket_client

    agent = make.user("agent")
    permit = make.permit(owner=make.user("permittee"), construction_started_on=dt.date(2026, 6, 2))
    enforcement.issue_stop_work(agent, permit, "Sediment leaving the site into the brook.")
    bucket_client(s3_settings).delete_bucket(Bucket=s3_settings["S3_BUCKET"])
    with pytest.raises(Exception):
        db.session.commit()
    db.session.rollback()
    assert db.session.scalar(select(func.count()).select_from(StopWorkOrder)) == 0
    assert smtp_server == []


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")  # (a test server on loopback)
def test_a_mail_server_that_asks_for_a_login_gets_it_and_the_message_its_date_and_id(app):
    # Mail went out with no login (a town on Microsoft 365 or Google Workspace sent nothing: "530 Authentication
    # required"), and with no Date or Message-ID, which some receiving servers refuse.
    from aiosmtpd.controller import Controller
    from aiosmtpd.handlers import Message
    from aiosmtpd.smtp import AuthResult

    received, logins = [], []

    class Keep(Message):
        def handle_message(self, message):
            received.append(message)

    def authenticator(server, session, envelope, mechanism, auth_data):
        logins.append((auth_data.login, auth_data.password))
        return AuthResult(success=(auth_data.login, auth_data.password) == (b"town-mailer", b"s3cret"))

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    controller = Controller(Keep(), hostname="127.0.0.1", port=port, authenticator=authenticator,
                            auth_required=True, auth_require_tls=False)
    controller.start()
    try:
        app.config.update(SMTP_HOST="127.0.0.1", SMTP_PORT=port, SMTP_SECURITY="none")
        refused = mail.send(["owner@example.org"], "Stop-work order", "Stop all work.")
        db.session.commit()
        assert refused.sent_at is None and "530" in refused.error and received == []
        app.config.update(SMTP_USERNAME="town-mailer", SMTP_PASSWORD="s3cret")
        sent = mail.send(["owner@example.org"], "Stop-work order", "Stop all work.")
        db.session.commit()
    finally:
        controller.stop()
    assert sent.sent_at is not None and sent.error is None
    assert logins[-1] == (b"town-mailer", b"s3cret")
    (message,) = received
    assert message["Date"] and message["Message-ID"].startswith("<") and message["Message-ID"].endswith(">")


def test_an_unknown_way_of_securing_the_mail_server_stops_the_app_at_start(app):
    from inspect_app import config

    with pytest.raises(config.SettingError, match="SMTP_SECURITY must be one of none, starttls, ssl"):
        config.check_mail({"SMTP_SECURITY": "tls1.3"})


def test_a_message_the_mail_package_cannot_build_fails_neither_the_change_nor_the_next_message(app, smtp_server):
    # A header with a line break raised out of the commit, after the change was committed, and the messages after
    # it were never sent nor marked.
    bad = mail.send(["owner@example.org"], "Stop-work order: permit SW-1\r\nX", "Stop all work.")
    good = mail.send(["owner@example.org"], "Notice of violation", "Fix the silt fence.")
    bad_id, good_id = bad.id, good.id
    db.session.commit()
    db.session.expire_all()
    assert "ValueError" in db.session.get(OutboundEmail, bad_id).error
    assert db.session.get(OutboundEmail, good_id).sent_at is not None
    assert [m["Subject"] for m in smtp_server] == ["Notice of violation"]
