"""indexes for a state-wide record (issue 33): what one permit's change or page reads does not grow with the others

Revision ID: 0032scale
Revises: 0031

- permit_obligations (due_at, opens_at, kind, permit_id), in place of (due_at): the dashboard of the admin of all
  towns counts every stored obligation of the state from the index alone.

The two of reports are partial (only the few rows asked about), so the database never takes them for a lookup
of the many:
- inspections.status where 'draft': the drafts, which every list and the schedule leave out (accounts.policy.hidden_draft_parts),
  were found by reading every report of every permit, in every commit that changes a permit's record;
- inspections.amends_id where not null: whether a report is corrected by an amendment was a read of every report, per report.

Indexes only: no table is copied, and the guards on final records (audit/guards.py) are untouched.
"""
from alembic import op
import sqlalchemy as sa

revision = '0032scale'
down_revision = '0031'
branch_labels = None
depends_on = None

INDEXES = (
    ('ix_inspections_drafts', 'inspections', ['status'], "status = 'draft'"),
    ('ix_inspections_amendments', 'inspections', ['amends_id'], "amends_id IS NOT NULL"),
)


def upgrade():
    for name, table, columns, where in INDEXES:
        op.create_index(name, table, columns, unique=False, sqlite_where=sa.text(where),
                        postgresql_where=sa.text(where))
    op.create_index('ix_permit_obligations_due', 'permit_obligations', ['due_at', 'opens_at', 'kind', 'permit_id'],
                    unique=False)
    op.drop_index('ix_permit_obligations_due_at', table_name='permit_obligations')


def downgrade():
    op.create_index('ix_permit_obligations_due_at', 'permit_obligations', ['due_at'], unique=False)
    op.drop_index('ix_permit_obligations_due', table_name='permit_obligations')
    for name, table, _columns, _where in reversed(INDEXES):
        op.drop_index(name, table_name=table)
