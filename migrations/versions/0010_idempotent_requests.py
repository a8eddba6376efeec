"""idempotent form posts: the key a device sent with an unsafe request, and the first answer

Revision ID: 0010
Revises: 0009
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.types import UTCDateTime


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'idempotent_requests',
        sa.Column('user_id', sa.String(length=36), nullable=False),
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('method', sa.String(length=10), nullable=False),
        sa.Column('path', sa.String(length=2000), nullable=False),
        sa.Column('received_at', UTCDateTime(timezone=True), nullable=False),
        sa.Column('status', sa.Integer(), nullable=True),
        sa.Column('headers', sa.JSON(), nullable=True),
        sa.Column('body', sa.LargeBinary(), nullable=True),
        sa.Column('answered_at', UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_idempotent_requests_user_id_users')),
        sa.PrimaryKeyConstraint('user_id', 'key', name=op.f('pk_idempotent_requests')),
    )


def downgrade():
    op.drop_table('idempotent_requests')
