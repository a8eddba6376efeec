"""a per-user session version: raising it ends every session and remember-me cookie of that user

Revision ID: 0005_i15b
Revises: 0004
"""
from alembic import op
import sqlalchemy as sa


revision = '0005_i15b'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('session_version', sa.Integer(), server_default='1', nullable=False))


def downgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('session_version')
