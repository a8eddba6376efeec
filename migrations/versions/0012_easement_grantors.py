"""easement grantors as responsible parties of the O&M plan (§380-14 F(2))

Revision ID: 0012
Revises: 0011
"""
from alembic import op
import sqlalchemy as sa


revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None

_CHECK = 'ck_responsible_parties_party_role'


def _roles(*roles: str) -> str:
    return "role IN (" + ", ".join(f"'{r}'" for r in roles) + ")"


def upgrade():
    with op.batch_alter_table('responsible_parties', schema=None) as batch_op:
        batch_op.drop_constraint(op.f(_CHECK), type_='check')
        batch_op.alter_column('role', existing_type=sa.String(length=11), type_=sa.String(length=16),
                              existing_nullable=False)
        batch_op.create_check_constraint('party_role', _roles('owner', 'financial', 'operational', 'easement_grantor'))


def downgrade():
    # An easement grantor has no place in the older schema: it goes with the downgrade.
    op.execute("DELETE FROM schedule_amendment_signatures WHERE party_id IN "
               "(SELECT id FROM responsible_parties WHERE role = 'easement_grantor')")
    op.execute("DELETE FROM responsible_parties WHERE role = 'easement_grantor'")
    with op.batch_alter_table('responsible_parties', schema=None) as batch_op:
        batch_op.drop_constraint(op.f(_CHECK), type_='check')
        batch_op.alter_column('role', existing_type=sa.String(length=16), type_=sa.String(length=11),
                              existing_nullable=False)
        batch_op.create_check_constraint('party_role', _roles('owner', 'financial', 'operational'))
