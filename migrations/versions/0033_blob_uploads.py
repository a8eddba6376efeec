"""who is sending each unfinished upload, so that its bytes count against their quota

Revision ID: 0033
Revises: 0032scale

An upload begun through /sync/blobs and never completed took no part of its sender's quota: a device could keep
any number of them (each up to SYNC_MAX_BLOB_BYTES) until `flask blobs gc` removed them a day later.
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.types import UTCDateTime

revision = '0033'
down_revision = '0032scale'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'blob_uploads',
        sa.Column('sha256', sa.String(length=64), nullable=False),
        sa.Column('user_id', sa.String(length=36), nullable=False),
        sa.Column('received', sa.BigInteger(), nullable=False),
        sa.Column('updated_at', UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_blob_uploads_user_id_users')),
        sa.PrimaryKeyConstraint('sha256', 'user_id', name=op.f('pk_blob_uploads')),
    )
    op.create_index(op.f('ix_blob_uploads_user_id'), 'blob_uploads', ['user_id'], unique=False)


def downgrade():
    op.drop_index(op.f('ix_blob_uploads_user_id'), table_name='blob_uploads')
    op.drop_table('blob_uploads')
