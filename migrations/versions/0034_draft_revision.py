"""a draft's revision: a save sent from a page older than the draft's last save is refused, not kept over it

Revision ID: 0034
Revises: 0033

The same draft open in two tabs (or on two devices): each saved the whole form in the background, so the second
undid what the first had saved, and both said "Saved". Each save now counts; a page sends the count it was made
at. The guard on submitted reports names every column (audit/guards.py): it is made again with the new one.
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.audit import guards

revision = '0034'
down_revision = '0033'
branch_labels = None
depends_on = None


def upgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.add_column(sa.Column('revision', sa.Integer(), server_default='0', nullable=False))
    guards.create_for_schema_now(connection)


def downgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.drop_column('revision')
    guards.create_for_schema_now(connection)
