"""a record no one can quietly change: the audit log's hash chain, database guards, frozen documents

Revision ID: 0008
Revises: 0007
"""
from alembic import op
import sqlalchemy as sa

import inspect_app.types
from inspect_app.audit import chain, guards
from inspect_app.audit.models import AuditEntry, chain_rows


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('documents',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('kind', sa.Enum('inspection_report', 'stop_work_order', 'certificate_of_completion', 'om_certification', name='document_kind', native_enum=False, create_constraint=True), nullable=False),
    sa.Column('subject_id', sa.String(length=36), nullable=False),
    sa.Column('permit_id', sa.String(length=36), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('pdf_sha256', sa.String(length=64), nullable=False),
    sa.Column('pdf_size', sa.Integer(), nullable=False),
    sa.Column('record_sha256', sa.String(length=64), nullable=False),
    sa.Column('signed_by', sa.String(length=200), nullable=True),
    sa.Column('signed_at', inspect_app.types.UTCDateTime(timezone=True), nullable=True),
    sa.Column('occasion', sa.String(length=120), nullable=False),
    sa.Column('amends_id', sa.String(length=36), nullable=True),
    sa.Column('frozen_at', inspect_app.types.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['amends_id'], ['documents.id'], name=op.f('fk_documents_amends_id_documents')),
    sa.ForeignKeyConstraint(['pdf_sha256'], ['blobs.sha256'], name=op.f('fk_documents_pdf_sha256_blobs')),
    sa.ForeignKeyConstraint(['permit_id'], ['permits.id'], name=op.f('fk_documents_permit_id_permits')),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_documents'))
    )
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_documents_permit_id'), ['permit_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_documents_subject_id'), ['subject_id'], unique=False)

    with op.batch_alter_table('photos', schema=None) as batch_op:
        batch_op.add_column(sa.Column('print_sha256', sa.String(length=64), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_photos_print_sha256_blobs'), 'blobs', ['print_sha256'], ['sha256'])

    with op.batch_alter_table('audit_entries', schema=None) as batch_op:
        batch_op.add_column(sa.Column('prev_hash', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('hash', sa.String(length=64), nullable=True))

    # The entries already there are chained in their commit order, read back as `flask audit verify` reads them.
    connection = op.get_bind()
    table = AuditEntry.__table__
    rows = connection.execute(chain_rows()).mappings().all()
    sealed = [{"row_seq": row["seq"], "prev_hash": prev, "hash": digest}
              for row, prev, digest in chain.link(chain.GENESIS, rows)]
    if sealed:
        connection.execute(table.update().where(table.c.seq == sa.bindparam("row_seq"))
                           .values(prev_hash=sa.bindparam("prev_hash"), hash=sa.bindparam("hash")), sealed)
    # Then the database refuses to change what is final (guards.py), from here on.
    guards.create_for_schema_now(connection)


def downgrade():
    guards.drop(op.get_bind())
    with op.batch_alter_table('audit_entries', schema=None) as batch_op:
        batch_op.drop_column('hash')
        batch_op.drop_column('prev_hash')

    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_documents_subject_id'))
        batch_op.drop_index(batch_op.f('ix_documents_permit_id'))

    op.drop_table('documents')

    with op.batch_alter_table('photos', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_photos_print_sha256_blobs'), type_='foreignkey')
        batch_op.drop_column('print_sha256')
