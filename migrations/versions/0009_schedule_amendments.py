"""maintenance schedule amendments signed by all responsible parties (§380-14 F(2))

Revision ID: 0009
Revises: 0008
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.types import UTCDateTime


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'schedule_amendments',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('permit_id', sa.String(length=36), nullable=False),
        sa.Column('structure_id', sa.String(length=36), nullable=False),
        sa.Column('task', sa.Text(), nullable=True),
        sa.Column('interval_months', sa.Integer(), nullable=True),
        sa.Column('proposed_by_id', sa.String(length=36), nullable=True),
        sa.Column('proposed_at', UTCDateTime(timezone=True), nullable=False),
        sa.Column('in_force_at', UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['permit_id'], ['permits.id'], name=op.f('fk_schedule_amendments_permit_id_permits')),
        sa.ForeignKeyConstraint(['proposed_by_id'], ['users.id'], name=op.f('fk_schedule_amendments_proposed_by_id_users')),
        sa.ForeignKeyConstraint(['structure_id'], ['stormwater_structures.id'],
                                name=op.f('fk_schedule_amendments_structure_id_stormwater_structures')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_amendments')),
    )
    op.create_index(op.f('ix_schedule_amendments_permit_id'), 'schedule_amendments', ['permit_id'], unique=False)
    op.create_table(
        'schedule_amendment_signatures',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('amendment_id', sa.String(length=36), nullable=False),
        sa.Column('party_id', sa.String(length=36), nullable=False),
        sa.Column('signed_by_id', sa.String(length=36), nullable=True),
        sa.Column('signed_at', UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['amendment_id'], ['schedule_amendments.id'],
                                name=op.f('fk_schedule_amendment_signatures_amendment_id_schedule_amendments')),
        sa.ForeignKeyConstraint(['party_id'], ['responsible_parties.id'],
                                name=op.f('fk_schedule_amendment_signatures_party_id_responsible_parties')),
        sa.ForeignKeyConstraint(['signed_by_id'], ['users.id'],
                                name=op.f('fk_schedule_amendment_signatures_signed_by_id_users')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_schedule_amendment_signatures')),
        sa.UniqueConstraint('amendment_id', 'party_id', name=op.f('uq_schedule_amendment_party')),
    )
    op.create_index(op.f('ix_schedule_amendment_signatures_amendment_id'), 'schedule_amendment_signatures',
                    ['amendment_id'], unique=False)


def downgrade():
    op.drop_index(op.f('ix_schedule_amendment_signatures_amendment_id'), table_name='schedule_amendment_signatures')
    op.drop_table('schedule_amendment_signatures')
    op.drop_index(op.f('ix_schedule_amendments_permit_id'), table_name='schedule_amendments')
    op.drop_table('schedule_amendments')
