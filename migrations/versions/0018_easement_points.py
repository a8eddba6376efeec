"""a point on the site map for stormwater management easements (§380-14 C(2)(m): "A map and list")

Revision ID: 0018
Revises: 0017

The easements table is not guarded (audit/guards.py), so no trigger needs to be made again.
"""
from alembic import op
import sqlalchemy as sa


revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('easements', schema=None) as batch_op:
        batch_op.add_column(sa.Column('latitude', sa.Double(), nullable=True))
        batch_op.add_column(sa.Column('longitude', sa.Double(), nullable=True))
        batch_op.create_check_constraint('latitude_range', 'latitude BETWEEN -90 AND 90')
        batch_op.create_check_constraint('longitude_range', 'longitude BETWEEN -180 AND 180')
        batch_op.create_check_constraint('point_whole', '(latitude IS NULL) = (longitude IS NULL)')


def downgrade():
    with op.batch_alter_table('easements', schema=None) as batch_op:
        for name in ('point_whole', 'longitude_range', 'latitude_range'):
            batch_op.drop_constraint(op.f(f'ck_easements_{name}'), type_='check')
        batch_op.drop_column('longitude')
        batch_op.drop_column('latitude')
