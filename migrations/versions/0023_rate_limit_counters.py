"""the sign-in and /verify limits' counters, in the database so every worker and app server counts the same

Revision ID: 0023
Revises: 0022

A new table, not guarded (audit/guards.py): no trigger to make. Filled by the app as it answers
(inspect_app/rate_limits.py); its rows are counts of the current windows, none of them a record.
"""
from alembic import op
import sqlalchemy as sa


revision = '0023'
down_revision = '0022'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'rate_limit_counters',
        sa.Column('key', sa.String(length=512), nullable=False),
        sa.Column('count', sa.Integer(), nullable=False),
        sa.Column('expires_at', sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint('key', name=op.f('pk_rate_limit_counters')),
    )
    op.create_index(op.f('ix_rate_limit_counters_expires_at'), 'rate_limit_counters', ['expires_at'])


def downgrade():
    op.drop_index(op.f('ix_rate_limit_counters_expires_at'), table_name='rate_limit_counters')
    op.drop_table('rate_limit_counters')
