"""the day a permit's extension was granted (Southborough §9.7)

Revision ID: 0002
Revises: 0001
"""
from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('permits', schema=None) as batch_op:
        batch_op.add_column(sa.Column('extension_granted_on', sa.Date(), nullable=True))


def downgrade():
    with op.batch_alter_table('permits', schema=None) as batch_op:
        batch_op.drop_column('extension_granted_on')
