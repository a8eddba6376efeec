"""easements as records: purpose, location, grantor and registry recording of each (§380-14 C(2)(d), D(2), D(4))

The O&M plan's easements were one text; each becomes a record. An existing text is kept as the purpose of
one easement with no location given, recorded when the plan was.

Revision ID: 0015
Revises: 0014
"""
import datetime as dt
import uuid

from alembic import op
import sqlalchemy as sa

from inspect_app.types import UTCDateTime


revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table(
        'easements',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('permit_id', sa.String(length=36), nullable=False),
        sa.Column('purpose', sa.Text(), nullable=False),
        sa.Column('location', sa.String(length=300), nullable=True),
        sa.Column('grantor_id', sa.String(length=36), nullable=True),
        sa.Column('registry_reference', sa.String(length=120), nullable=True),
        sa.Column('recorded_on', sa.Date(), nullable=True),
        sa.Column('created_at', UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['permit_id'], ['permits.id'], name=op.f('fk_easements_permit_id_permits')),
        sa.ForeignKeyConstraint(['grantor_id'], ['responsible_parties.id'],
                                name=op.f('fk_easements_grantor_id_responsible_parties')),
        sa.PrimaryKeyConstraint('id', name=op.f('pk_easements')),
    )
    op.create_index(op.f('ix_easements_permit_id'), 'easements', ['permit_id'], unique=False)
    connection = op.get_bind()
    plans = connection.execute(sa.text(
        "SELECT permit_id, easements, registry_reference, recorded_on FROM om_plans WHERE easements IS NOT NULL"))
    easements = sa.table('easements', sa.column('id'), sa.column('permit_id'), sa.column('purpose'),
                         sa.column('registry_reference'), sa.column('recorded_on'),  # as read: a date, or SQLite's text
                         sa.column('created_at', UTCDateTime(timezone=True)))
    rows = [{"id": str(uuid.uuid4()), "permit_id": permit_id, "purpose": text.strip(),
             "registry_reference": reference if recorded_on else None, "recorded_on": recorded_on,
             "created_at": dt.datetime.now(dt.timezone.utc)}
            for permit_id, text, reference, recorded_on in plans if (text or "").strip()]
    if rows:
        op.bulk_insert(easements, rows)
    with op.batch_alter_table('om_plans', schema=None) as batch_op:
        batch_op.drop_column('easements')


def downgrade():
    with op.batch_alter_table('om_plans', schema=None) as batch_op:
        batch_op.add_column(sa.Column('easements', sa.Text(), nullable=True))
    connection = op.get_bind()
    listed: dict[str, list[str]] = {}
    for permit_id, purpose, location in connection.execute(sa.text(
            "SELECT permit_id, purpose, location FROM easements ORDER BY created_at, id")):
        listed.setdefault(permit_id, []).append(f"{purpose} ({location})" if location else purpose)
    for permit_id, lines in listed.items():
        connection.execute(sa.text("UPDATE om_plans SET easements = :text WHERE permit_id = :permit_id"),
                           {"text": "\n".join(lines), "permit_id": permit_id})
    op.drop_index(op.f('ix_easements_permit_id'), table_name='easements')
    op.drop_table('easements')
