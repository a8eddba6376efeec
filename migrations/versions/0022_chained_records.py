"""surety releases join the final records: the database refuses to change or delete one (audit/guards.py)

Revision ID: 0022
Revises: 0020

No column changes. The guards' triggers are made again from the one declaration (`guards.RECORDS`), which
now has surety releases too; `flask audit verify` checks each final record against its latest chained
state, from the same declaration.
"""
from alembic import op

from inspect_app.audit import guards


revision = '0022'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade():
    connection = op.get_bind()
    guards.drop(connection)
    guards.create_for_schema_now(connection)


def downgrade():
    guards.drop(op.get_bind(), tables=["surety_releases"])
