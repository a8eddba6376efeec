"""the hash of a signed report's parts kept in rows of their own (answers, findings, photos, punch list, videos)

Revision ID: 0035
Revises: 0034

The guard on submitted reports covers the report's own row; its checklist answers, findings and their actions,
photos, punch list and videos are rows of other tables, which a change made outside the app could rewrite unseen.
Signing now also keeps the hash of those parts, written once: `flask audit verify` names a report whose parts
differ, and the weather filled in later seals no version of one. Reports signed before keep none (not checked).
The guard names every column (audit/guards.py): it is made again with the new one.
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.audit import guards

revision = '0035'
down_revision = '0034'
branch_labels = None
depends_on = None


def upgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.add_column(sa.Column('parts_sha256', sa.String(length=64), nullable=True))
    guards.create_for_schema_now(connection)


def downgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.drop_column('parts_sha256')
    guards.create_for_schema_now(connection)
