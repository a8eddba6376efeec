"""a point on the site map for disturbed areas and stormwater structures

Revision ID: 0013
Revises: 0012

Neither table is guarded (audit/guards.py), so no trigger needs to be made again.
"""
from alembic import op
import sqlalchemy as sa


revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None

_TABLES = ('disturbed_areas', 'stormwater_structures')


def upgrade():
    for table in _TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('latitude', sa.Double(), nullable=True))
            batch_op.add_column(sa.Column('longitude', sa.Double(), nullable=True))
            batch_op.create_check_constraint('latitude_range', 'latitude BETWEEN -90 AND 90')
            batch_op.create_check_constraint('longitude_range', 'longitude BETWEEN -180 AND 180')
            batch_op.create_check_constraint('point_whole', '(latitude IS NULL) = (longitude IS NULL)')


def downgrade():
    for table in _TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            for name in ('point_whole', 'longitude_range', 'latitude_range'):
                batch_op.drop_constraint(op.f(f'ck_{table}_{name}'), type_='check')
            batch_op.drop_column('longitude')
            batch_op.drop_column('latitude')
