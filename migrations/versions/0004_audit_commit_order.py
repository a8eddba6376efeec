"""audit entries numbered in commit order, the sync pull cursor

Revision ID: 0004
Revises: 0003
"""
from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('audit_entries', schema=None) as batch_op:
        batch_op.add_column(sa.Column('commit_seq', sa.BigInteger(), nullable=True))
        batch_op.create_unique_constraint(batch_op.f('uq_audit_entries_commit_seq'), ['commit_seq'])
    # Entries already there are all committed: their order of writing is their order of commit as far as
    # any reader could tell, and a device's cursor (the old `seq`) stays where it was.
    op.execute("UPDATE audit_entries SET commit_seq = seq")
    if op.get_bind().dialect.name == 'postgresql':
        op.execute("CREATE SEQUENCE audit_commit_seq")
        op.execute("SELECT setval('audit_commit_seq', coalesce((SELECT max(seq) FROM audit_entries), 0) + 1, false)")


def downgrade():
    if op.get_bind().dialect.name == 'postgresql':
        op.execute("DROP SEQUENCE audit_commit_seq")
    with op.batch_alter_table('audit_entries', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_audit_entries_commit_seq'), type_='unique')
        batch_op.drop_column('commit_seq')
