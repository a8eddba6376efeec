"""meteostat's station list around a point, kept so app servers find a site's nearest stations without asking

Revision ID: 0019
Revises: 0018

A new table, not guarded (audit/guards.py): no trigger to make.
"""
from alembic import op
import sqlalchemy as sa

import inspect_app.types


revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade():
    # The area's centre and radius first: what a lookup reads to see whether the list covers its site.
    columns = [sa.Column(name, sa.Double(), nullable=False) for name in ('latitude', 'longitude', 'radius_m')]
    op.create_table(
        'weather_station_areas',
        sa.Column('id', sa.String(length=36), nullable=False),
        *columns,
        sa.Column('stations', sa.JSON(), nullable=False),
        sa.Column('asked_at', inspect_app.types.UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_weather_station_areas')),
    )
    op.create_index(op.f('ix_weather_station_areas_asked_at'), 'weather_station_areas', ['asked_at'], unique=False)


def downgrade():
    op.drop_index(op.f('ix_weather_station_areas_asked_at'), table_name='weather_station_areas')
    op.drop_table('weather_station_areas')
