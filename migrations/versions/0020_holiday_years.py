"""the legal holidays of the towns' calendars, a row a year, kept so app servers need not import the holidays package

Revision ID: 0020
Revises: 0019

A new table, not guarded (audit/guards.py): no trigger to make. Filled by `flask towns sync`.
"""
from alembic import op
import sqlalchemy as sa


revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade():
    # One row a year of a calendar: the calendar and the year are the key ("" for a whole country).
    key = [('country', sa.String(length=8)), ('subdivision', sa.String(length=16)), ('year', sa.Integer())]
    op.create_table(
        'holiday_years',
        *(sa.Column(name, kind, nullable=False) for name, kind in key),
        sa.Column('package_version', sa.String(length=40), nullable=False),
        sa.Column('days', sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint(*(name for name, _ in key), name=op.f('pk_holiday_years')),
    )


def downgrade():
    op.drop_table('holiday_years')
