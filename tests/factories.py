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

    def inspection(self, permit, type: str = "erosion_control", *, status: str = "submitted",
                   evaluation: str | None = "compliant", performed_at: dt.datetime | None = None,
                   inspector=None, **fields):
        """An inspection report made directly with the model (no inspection UI needed)."""
        from inspect_app.inspections.models import Inspection
        from inspect_app.types import utcnow

        performed_at = performed_at or utcnow()
        inspection = Inspection(
            permit_id=permit.id, type=type, status=status, evaluation=evaluation, performed_at=performed_at,
            inspector_id=inspector.id if inspector else None,
            inspector_name=inspector.name if inspector else "Test Inspector",
            inspector_credentials=inspector.credentials if inspector else "P.E. (MA) No. 40000",
            submitted_at=performed_at if status == "submitted" else None, **fields)
        db.session.add(inspection)
        db.session.commit()
        return inspection

    def finding(self, permit, inspection=None, *, description: str = "Silt fence down at the east line",
                status: str = "open", **fields):
        """A finding of `permit` (made on `inspection`, or a new violations inspection), directly with the model."""
        from inspect_app.inspections.models import Finding

        inspection = inspection or self.inspection(permit, evaluation="violations")
        finding = Finding(permit_id=permit.id, inspection_id=inspection.id, description=description,
                          status=status, is_violation=True, **fields)
        db.session.add(finding)
        db.session.commit()
        return finding

    def photo(self, permit, *, inspection=None, finding=None, caption: str | None = "Silt fence, east line",
              taken_at: str | None = "2026:06:10 10:15:00", size: tuple[int, int] = (320, 240), shade: int = 0):
        """A real JPEG (with EXIF DateTimeOriginal when `taken_at`) stored through the photo service."""
        import io

        from PIL import Image, ImageDraw

        from inspect_app.photos.services import store_photo

        image = Image.new("RGB", size, (shade % 256, 110, 180 - shade % 180))
        ImageDraw.Draw(image).rectangle((8, 8, size[0] // 2, size[1] // 2), fill=(250, 250, 250))
        exif = Image.Exif()
        if taken_at:
            exif.get_ifd(0x8769)[0x9003] = taken_at  # Exif IFD: DateTimeOriginal, camera local time
        out = io.BytesIO()
        image.save(out, "JPEG", quality=80, exif=exif)
        photo = store_photo(None, permit, io.BytesIO(out.getvalue()), caption=caption, inspection=inspection,
                            finding=finding)
        db.session.commit()
        return photo


_CSRF = re.compile(r'<meta name="csrf-token" content="([^"]+)"')


class SignedIn:
    """A test client signed in as one user; `post` adds the CSRF token like the browser does."""

    def __init__(self, client: FlaskClient, user=None, password: str = PASSWORD, remember: bool = False):
        self.client = client
        self.token = self._token("/login")
        if user is not None:
            response = self.post("/login", {"email": user.email, "password": password,
                                            **({"remember": "y"} if remember else {})})
            assert response.status_code == 303, response.text
            self.token = self._token("/login")

    def _token(self, url: str) -> str:
        page = self.client.get(url, follow_redirects=True).text
        match = _CSRF.search(page)
        assert match, "page has no CSRF token"
        return match.group(1)

    def get(self, url: str, htmx: str | None = None, **kwargs):
        """GET `url`; with `htmx`, as htmx asks for the element of that id (HX-Request, HX-Target)."""
        return self.client.get(url, headers=_htmx_headers(htmx), **kwargs)

    def post(self, url: str, data: dict | None = None, htmx: str | None = None, **kwargs):
        """POST `data` with the CSRF token; with `htmx`, as an htmx form whose hx-target is that id."""
        data = {"csrf_token": self.token, **(data or {})}
        return self.client.post(url, data=data, headers=_htmx_headers(htmx), **kwargs)


def _htmx_headers(target: str | None) -> dict[str, str]:
    """The headers htmx sends when an element swaps the element with id `target` (none without one)."""
    return {"HX-Request": "true", "HX-Target": target} if target else {}
