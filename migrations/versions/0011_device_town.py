"""a device token is limited to the town of the admin who minted it (NULL: no town limit)

Existing tokens take the town of the admin who minted them; tokens minted at the server's prompt or by
the admin of all towns keep no town limit.

Revision ID: 0011
Revises: 0010
"""
from alembic import op
import sqlalchemy as sa


revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None


def upgrade():
    with op.batch_alter_table('sync_devices', schema=None) as batch_op:
        batch_op.add_column(sa.Column('jurisdiction_id', sa.String(length=36), nullable=True))
        batch_op.create_foreign_key(batch_op.f('fk_sync_devices_jurisdiction_id_jurisdictions'), 'jurisdictions',
                                    ['jurisdiction_id'], ['id'])
    op.execute("UPDATE sync_devices SET jurisdiction_id = (SELECT users.jurisdiction_id FROM users "
               "WHERE users.id = sync_devices.created_by_id AND users.role = 'admin')")


def downgrade():
    with op.batch_alter_table('sync_devices', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_sync_devices_jurisdiction_id_jurisdictions'), type_='foreignkey')
        batch_op.drop_column('jurisdiction_id')
