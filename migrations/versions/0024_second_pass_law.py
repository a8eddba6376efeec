"""the law, second pass: frozen-conditions periods, snowmelt discharges, waivers; the time construction
started, who recorded a backfill, when a corrective action was recorded, a station's snow depth

Revision ID: 0024
Revises: 0023

New tables and new columns of tables that are not guarded (audit/guards.py): no trigger to make again.
A permit's construction start keeps its day; the time is empty for the permits of the old record, which the
schedule reads as the end of that day, as before.
"""
from alembic import op
import sqlalchemy as sa

import inspect_app.types


revision = '0024'
down_revision = '0023'
branch_labels = None
depends_on = None


def _utc(name: str, nullable: bool = True) -> sa.Column:
    return sa.Column(name, inspect_app.types.UTCDateTime(timezone=True), nullable=nullable)


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint([column], [f'{target}.id'], name=op.f(f'fk_{table}_{column}_{target}'))


def upgrade():
    op.create_table(
        'frozen_periods',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('permit_id', sa.String(length=36), nullable=False),
        sa.Column('suspended', sa.Boolean(), nullable=False),
        _utc('starts_at', nullable=False),
        _utc('ends_at'),
        sa.Column('note', sa.Text(), nullable=False),
        sa.Column('recorded_by_id', sa.String(length=36), nullable=False),
        _utc('recorded_at', nullable=False),
        sa.Column('ended_by_id', sa.String(length=36), nullable=True),
        _fk('frozen_periods', 'permit_id', 'permits'),
        _fk('frozen_periods', 'recorded_by_id', 'users'),
        _fk('frozen_periods', 'ended_by_id', 'users'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_frozen_periods')),
    )
    op.create_index(op.f('ix_frozen_periods_permit_id'), 'frozen_periods', ['permit_id'], unique=False)
    op.create_table(
        'snowmelt_discharges',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('permit_id', sa.String(length=36), nullable=False),
        _utc('discharge_at', nullable=False),
        sa.Column('snow_mm', sa.Double(), nullable=False),
        sa.Column('seen_on_site', sa.Boolean(), nullable=False),
        sa.Column('station_id', sa.String(length=20), nullable=True),
        _utc('snowfall_at'),
        sa.Column('note', sa.Text(), nullable=True),
        sa.Column('recorded_by_id', sa.String(length=36), nullable=True),
        _utc('recorded_at', nullable=False),
        _fk('snowmelt_discharges', 'permit_id', 'permits'),
        _fk('snowmelt_discharges', 'recorded_by_id', 'users'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_snowmelt_discharges')),
        sa.UniqueConstraint('permit_id', 'discharge_at', 'seen_on_site', name='uq_snowmelt_permit_at'),
    )
    op.create_index(op.f('ix_snowmelt_discharges_permit_id'), 'snowmelt_discharges', ['permit_id'], unique=False)
    op.create_table(
        'waivers',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('permit_id', sa.String(length=36), nullable=False),
        sa.Column('requirement', sa.String(length=40), nullable=False),
        sa.Column('structure_id', sa.String(length=36), nullable=True),
        sa.Column('reason', sa.Text(), nullable=False),
        sa.Column('granted_on', sa.Date(), nullable=False),
        sa.Column('granted_by_id', sa.String(length=36), nullable=False),
        _utc('recorded_at', nullable=False),
        _fk('waivers', 'permit_id', 'permits'),
        _fk('waivers', 'structure_id', 'stormwater_structures'),
        _fk('waivers', 'granted_by_id', 'users'),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_waivers')),
    )
    op.create_index(op.f('ix_waivers_permit_id'), 'waivers', ['permit_id'], unique=False)
    with op.batch_alter_table('permits', schema=None) as batch_op:
        batch_op.add_column(_utc('construction_started_at'))
    with op.batch_alter_table('stormwater_structures', schema=None) as batch_op:
        batch_op.add_column(sa.Column('backfilled_by_id', sa.String(length=36), nullable=True))
        batch_op.create_foreign_key(op.f('fk_stormwater_structures_backfilled_by_id_users'), 'users',
                                    ['backfilled_by_id'], ['id'])
    with op.batch_alter_table('corrective_actions', schema=None) as batch_op:
        batch_op.add_column(_utc('created_at'))
    with op.batch_alter_table('weather_observations', schema=None) as batch_op:
        batch_op.add_column(sa.Column('snow_depth_cm', sa.Double(), nullable=True))


def downgrade():
    with op.batch_alter_table('weather_observations', schema=None) as batch_op:
        batch_op.drop_column('snow_depth_cm')
    with op.batch_alter_table('corrective_actions', schema=None) as batch_op:
        batch_op.drop_column('created_at')
    with op.batch_alter_table('stormwater_structures', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('fk_stormwater_structures_backfilled_by_id_users'), type_='foreignkey')
        batch_op.drop_column('backfilled_by_id')
    with op.batch_alter_table('permits', schema=None) as batch_op:
        batch_op.drop_column('construction_started_at')
    op.drop_index(op.f('ix_waivers_permit_id'), table_name='waivers')
    op.drop_table('waivers')
    op.drop_index(op.f('ix_snowmelt_discharges_permit_id'), table_name='snowmelt_discharges')
    op.drop_table('snowmelt_discharges')
    op.drop_index(op.f('ix_frozen_periods_permit_id'), table_name='frozen_periods')
    op.drop_table('frozen_periods')
