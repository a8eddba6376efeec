"""permit clocks (Longmeadow §380-10 K extended start, Southborough §9.7 Town Clerk filing) and one
O&M certification per permit and period (§380-14 C(2)(l))

Revision ID: 0007
Revises: 0006
"""
from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None

_LIVE = sa.text("status != 'deficient'")


def upgrade():
    with op.batch_alter_table('permits', schema=None) as batch_op:
        batch_op.add_column(sa.Column('start_extended_to', sa.Date(), nullable=True))
        batch_op.add_column(sa.Column('decision_filed_on', sa.Date(), nullable=True))
    # Keep the earliest of any duplicates a double-click made before the constraint existed.
    op.execute(
        "UPDATE om_certifications SET status = 'deficient', review_note = 'Duplicate of an earlier certification "
        "of the same period (made before one per period was enforced).' "
        "WHERE status != 'deficient' AND EXISTS (SELECT 1 FROM om_certifications AS other "
        "WHERE other.permit_id = om_certifications.permit_id AND other.period_start = om_certifications.period_start "
        "AND other.status != 'deficient' AND (other.submitted_at < om_certifications.submitted_at "
        "OR (other.submitted_at = om_certifications.submitted_at AND other.id < om_certifications.id)))"
    )
    op.create_index('uq_om_certification_period', 'om_certifications', ['permit_id', 'period_start'], unique=True,
                    sqlite_where=_LIVE, postgresql_where=_LIVE)


def downgrade():
    op.drop_index('uq_om_certification_period', table_name='om_certifications')
    with op.batch_alter_table('permits', schema=None) as batch_op:
        batch_op.drop_column('decision_filed_on')
        batch_op.drop_column('start_extended_to')
