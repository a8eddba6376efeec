"""the weather the inspector observed on site, kept beside the station's (issues 31 and 32)

Revision ID: 0029
Revises: 0028

The guard on submitted reports names every column (audit/guards.py): it is made again with the new one, which
is frozen once the report is submitted (the inspector signed it; only the station's values come later).
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.audit import guards

revision = '0029'
down_revision = '0028'
branch_labels = None
depends_on = None


def upgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.add_column(sa.Column('observed_weather', sa.String(length=300), nullable=True))
    guards.create_for_schema_now(connection)


def downgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.drop_column('observed_weather')
    guards.create_for_schema_now(connection)
