"""why an inspection was made, the storms since the last one, who and when, the permittee's signature, the
permit's NPDES ID

Revision ID: 0016
Revises: 0015
"""
from alembic import op
import sqlalchemy as sa

import inspect_app.types
from inspect_app.audit import guards


revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None

_TRIGGERS = ('routine', 'storm_event', 'random', 'follow_up')
_INSPECTION_COLUMNS = ('inspector_title', 'inspector_organization', 'inspector_contact', 'ended_at',
                       'construction_phase', 'trigger', 'schedule_in_force', 'storms', 'permittee_signer_name',
                       'permittee_signer_title', 'permittee_signature_sha256')


def upgrade():
    connection = op.get_bind()
    # The guard on submitted reports names every column: it is made again with the new ones.
    guards.drop(connection)
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        batch_op.add_column(sa.Column('inspector_title', sa.String(length=120), nullable=True))
        batch_op.add_column(sa.Column('inspector_organization', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('inspector_contact', sa.String(length=300), nullable=True))
        batch_op.add_column(sa.Column('ended_at', inspect_app.types.UTCDateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('construction_phase', sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column('trigger', sa.Enum(*_TRIGGERS, name='inspection_trigger', native_enum=False,
                                                         create_constraint=True), nullable=True))
        batch_op.add_column(sa.Column('schedule_in_force', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('storms', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('permittee_signer_name', sa.String(length=120), nullable=True))
        batch_op.add_column(sa.Column('permittee_signer_title', sa.String(length=120), nullable=True))
        batch_op.add_column(sa.Column('permittee_signature_sha256', sa.String(length=64), nullable=True))
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.add_column(sa.Column('title', sa.String(length=120), nullable=True))
    with op.batch_alter_table('permits', schema=None) as batch_op:
        batch_op.add_column(sa.Column('npdes_id', sa.String(length=40), nullable=True))
    guards.create_for_schema_now(connection)


def downgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('permits', schema=None) as batch_op:
        batch_op.drop_column('npdes_id')
    with op.batch_alter_table('users', schema=None) as batch_op:
        batch_op.drop_column('title')
    with op.batch_alter_table('inspections', schema=None) as batch_op:
        # The trigger's check goes with its column (SQLite's copy of the table would keep it, naming no column,
        # and refuse every row that has inspections).
        batch_op.drop_constraint(op.f('ck_inspections_inspection_trigger'), type_='check')
        for column in reversed(_INSPECTION_COLUMNS):
            batch_op.drop_column(column)
    guards.create_for_schema_now(connection)

