"""storm events from hourly data (the moment, the end, multi-day); per-parameter weather stations

Revision ID: 0005
Revises: 0004
"""
from alembic import op
import sqlalchemy as sa

import inspect_app.types


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('storm_events', schema=None) as batch_op:
        batch_op.add_column(sa.Column('started_at', inspect_app.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('reached_at', inspect_app.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('ended_at', inspect_app.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('multi_day', sa.Boolean(), server_default=sa.false(), nullable=False))
        batch_op.add_column(sa.Column('hours_missing', sa.Integer(), server_default=sa.text('0'), nullable=False))
        batch_op.add_column(sa.Column('ongoing', sa.Boolean(), server_default=sa.false(), nullable=False))
        # Two storms can reach the threshold on one local day; a storm is known by its moment.
        batch_op.drop_constraint('uq_storm_permit_day', type_='unique')
        batch_op.create_unique_constraint('uq_storm_permit_reached', ['permit_id', 'reached_at'])
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.add_column(sa.Column('weather_stations', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('weather_provisional', sa.Boolean(), server_default=sa.false(),
                                      nullable=False))


def downgrade():
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.drop_column('weather_provisional')
        batch_op.drop_column('weather_stations')
    with op.batch_alter_table('storm_events', schema=None) as batch_op:
        batch_op.drop_constraint('uq_storm_permit_reached', type_='unique')
        batch_op.create_unique_constraint('uq_storm_permit_day', ['permit_id', 'day'])
        batch_op.drop_column('ongoing')
        batch_op.drop_column('hours_missing')
        batch_op.drop_column('multi_day')
        batch_op.drop_column('ended_at')
        batch_op.drop_column('reached_at')
        batch_op.drop_column('started_at')
