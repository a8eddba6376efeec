"""a per-user session version: raising it ends every session and remember-me cookie of that user;
who uploaded each blob (per-user upload quota)

Revision ID: 0006
Revises: 0005
"""
from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('session_version', sa.Integer(), server_default='1', nullable=False))
    with op.batch_alter_table('blobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('uploaded_by_id', sa.String(length=36), nullable=True))
        batch_op.create_index(batch_op.f('ix_blobs_uploaded_by_id'), ['uploaded_by_id'], unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_blobs_uploaded_by_id_users'), 'users', ['uploaded_by_id'], ['id'])


def downgrade():
    with op.batch_alter_table('blobs', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_blobs_uploaded_by_id_users'), type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_blobs_uploaded_by_id'))
        batch_op.drop_column('uploaded_by_id')
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('session_version')
