"""Factories that make records through the app's own services, and a signed-in test client."""
from __future__ import annotations

import datetime as dt
import itertools
import re
from decimal import Decimal

from flask.testing import FlaskClient
from sqlalchemy import select

from inspect_app.accounts.services import create_user
from inspect_app.extensions import db
from inspect_app.permits import services as permits
from inspect_app.permits.models import Jurisdiction

PASSWORD = "correct horse battery"
_counter = itertools.count(1)


class Factories:
    """`make.user("agent")`, `make.permit(...)`, ...: each commits, so a live server sees it too."""

    def town(self, key: str = "longmeadow") -> Jurisdiction:
        permits.ensure_jurisdictions()
        return db.session.scalar(select(Jurisdiction).where(Jurisdiction.profile_key == key))

    def user(self, role: str = "inspector", town: str | None = "longmeadow", **fields):
        n = next(_counter)
        fields.setdefault("email", f"{role}{n}@example.org")
        fields.setdefault("name", f"{role.title()} {n}")
        if role == "inspector":
            fields.setdefault("pe_number", f"4{n:04d}")
            fields.setdefault("certification", f"CPESC No. {n}")
        jurisdiction = self.town(town) if town and role in ("agent", "admin") else None
        user = create_user(password=PASSWORD, role=role, jurisdiction=jurisdiction, **fields)
        db.session.commit()
        return user

    def permit(self, town: str = "longmeadow", *, owner=None, inspectors=(), areas=(), structures=(),
               **fields):
        n = next(_counter)
        defaults = {
            "number": f"TEST-{n:04d}", "site_address": f"{n} Williams Street, Longmeadow, MA",
            "latitude": 42.0501, "longitude": -72.5828, "owner_name": "Owner LLC",
            "applicant_name": "Applicant Inc.", "applicant_email": "applicant@example.org",
            "disturbed_acres": Decimal("1.500"), "cgp_schedule": "every_7_days",
            "issued_on": dt.date(2026, 6, 1),
        }
        defaults.update(fields)
        permit = permits.create_permit(None, jurisdiction_id=self.town(town).id,
                                       owner_id=owner.id if owner else None, **defaults)
        for inspector in inspectors:
            permits.assign(None, permit, inspector, "design_engineer")
        for name in areas:
            permits.add_area(None, permit, name, Decimal("0.500"))
        for name in structures:
            permits.add_structure(None, permit, name=name, kind="pipe", is_underground=True)
        db.session.commit()
        return permit


_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


class SignedIn:
    """A test client signed in as one user; `post` adds the CSRF token like the browser does."""

    def __init__(self, client: FlaskClient, user=None, password: str = PASSWORD):
        self.client = client
        self.token = self._token("/login")
        if user is not None:
            response = self.post("/login", {"email": user.email, "password": password})
            assert response.status_code == 303, response.text
            self.token = self._token("/login")

    def _token(self, url: str) -> str:
        page = self.client.get(url, follow_redirects=True).text
        match = _CSRF.search(page)
        assert match, "page has no CSRF token"
        return match.group(1)

    def get(self, url: str, htmx: bool = False, **kwargs):
        headers = {"HX-Request": "true"} if htmx else {}
        return self.client.get(url, headers=headers, **kwargs)

    def post(self, url: str, data: dict | None = None, htmx: bool = False, **kwargs):
        data = {"csrf_token": self.token, **(data or {})}
        headers = {"HX-Request": "true"} if htmx else {}
        return self.client.post(url, data=data, headers=headers, **kwargs)
