"""the database refuses to change a granted waiver, a recorded snowmelt discharge or a frozen-conditions period's
beginning, as it refuses for the other final records (audit/guards.py; issue 32)

Revision ID: 0028
Revises: 0027

No column changes: the guards' triggers are made again, now with these three tables.
"""
from alembic import op

from inspect_app.audit import guards

revision = '0028'
down_revision = '0027'
branch_labels = None
depends_on = None

_NEW = ("waivers", "frozen_periods", "snowmelt_discharges")


def upgrade():
    connection = op.get_bind()
    guards.drop(connection)
    guards.create_for_schema_now(connection)


def downgrade():
    guards.drop(op.get_bind(), _NEW)
