"""the secret of an inspector's calendar subscription link

Revision ID: 0003
Revises: 0002
"""
from alembic import op
import sqlalchemy as sa


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('calendar_key', sa.String(length=64), nullable=True))
        batch_op.create_unique_constraint(batch_op.f('uq_users_calendar_key'), ['calendar_key'])


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('uq_users_calendar_key'), type_='unique')
        batch_op.drop_column('calendar_key')
