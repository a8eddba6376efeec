"""photo markup: the shapes drawn on a photo and its marked-up copies (the original never changes)

Revision ID: 0014
Revises: 0013
"""
from alembic import op
import sqlalchemy as sa


revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None

_MARKED = ('marked_display_sha256', 'marked_thumb_sha256', 'marked_print_sha256')


def upgrade():
    # The photos table has no guard triggers (audit/guards.py): nothing to re-create.
    with op.batch_alter_table('photos', schema=None) as batch_op:
        batch_op.add_column(sa.Column('markup', sa.JSON(), nullable=True))
        for column in _MARKED:
            batch_op.add_column(sa.Column(column, sa.String(length=64), nullable=True))
            batch_op.create_foreign_key(batch_op.f(f'fk_photos_{column}_blobs'), 'blobs', [column], ['sha256'])


def downgrade():
    with op.batch_alter_table('photos', schema=None) as batch_op:
        for column in reversed(_MARKED):
            batch_op.drop_constraint(batch_op.f(f'fk_photos_{column}_blobs'), type_='foreignkey')
            batch_op.drop_column(column)
        batch_op.drop_column('markup')
