"""the certificate of completion keeps the inspections waived and missed; the permit history is a frozen document

Revision ID: 0026
Revises: 0024

The certificates' guard names every column: it is made again with the new one.
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.audit import guards


revision = '0026'
down_revision = '0024'
branch_labels = None
depends_on = None

_KINDS = ('inspection_report', 'stop_work_order', 'certificate_of_completion', 'om_certification')


def _document_kinds(kinds: tuple[str, ...]) -> None:
    """Re-make the documents' kind check to allow exactly `kinds` (its length is the longest, unchanged)."""
    with op.batch_alter_table('documents', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_documents_document_kind'), type_='check')
        batch_op.create_check_constraint('document_kind', "kind IN (" + ", ".join(f"'{k}'" for k in kinds) + ")")


def upgrade():
    connection = op.get_bind()
    guards.drop(connection)
    with op.batch_alter_table('certificates_of_completion', schema=None) as batch_op:
        batch_op.add_column(sa.Column('contents', sa.JSON(), nullable=True))
    _document_kinds((*_KINDS, 'permit_history'))
    guards.create_for_schema_now(connection)


def downgrade():
    connection = op.get_bind()
    guards.drop(connection)
    # The older schema has no frozen histories: they go (a history is made again on each download there).
    op.execute("DELETE FROM documents WHERE kind = 'permit_history'")
    _document_kinds(_KINDS)
    with op.batch_alter_table('certificates_of_completion', schema=None) as batch_op:
        batch_op.drop_column('contents')
    guards.create_for_schema_now(connection)
