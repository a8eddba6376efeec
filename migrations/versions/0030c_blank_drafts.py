"""a draft made by Start and not kept since is blank: it owes nothing, and Start opens it again (issue 31)

Revision ID: 0030c
Revises: 0029

The guard on submitted reports names every column (audit/guards.py): it is made again with the new one. The
reports already stored count as kept (each draft was made by a Start or a save that, until now, owed its report).
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.audit import guards

revision = '0030c'
down_revision = '0029'
branch_labels = None
depends_on = None


def upgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.add_column(sa.Column('blank', sa.Boolean(), server_default=sa.false(), nullable=False))
    guards.create_for_schema_now(connection)


def downgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.drop_column('blank')
    guards.create_for_schema_now(connection)
