"""the permit's parcel id (the assessor's map and lot), as a town's permit tracker exports it (issue 34)

Revision ID: 0027
Revises: 0026

Permits are not guarded (audit/guards.py): no trigger to change.
"""
from alembic import op
import sqlalchemy as sa


revision = '0027'
down_revision = '0026'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('permits') as batch_op:
        batch_op.add_column(sa.Column('parcel_id', sa.String(length=60), nullable=True))


def downgrade():
    with op.batch_alter_table('permits') as batch_op:
        batch_op.drop_column('parcel_id')
