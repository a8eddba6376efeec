"""The site most offline tests inspect."""
from __future__ import annotations

import pytest

from inspect_app.extensions import db
from inspect_app.permits import services as permits


@pytest.fixture
def site(make):
    """An inspector assigned to a permit with a disturbed area and a BMP (a silt fence)."""
    inspector = make.user("inspector")
    permit = make.permit(inspectors=[inspector], areas=["Lot 1 pad"])
    permits.add_structure(None, permit, name="Silt fence, north edge", kind="bmp", is_underground=False)
    db.session.commit()
    return inspector, permit
