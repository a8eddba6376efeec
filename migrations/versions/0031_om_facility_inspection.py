"""the O&M facility inspection (§380-14 A(3)): a seventh inspection type, allowed by the columns that name a type

Revision ID: 0031
Revises: 0030c

The type columns of reports and of 24-hour notices are checked against the registry's keys (types.choice): the
checks are made again with the new key. The guard on submitted reports names every column (audit/guards.py), and
SQLite copies the table to change a check, so the guard is made again too.
"""
from alembic import op
import sqlalchemy as sa

from inspect_app.audit import guards

revision = '0031'
down_revision = '0030c'
branch_labels = None
depends_on = None

BEFORE = ('initial', 'erosion_control', 'pre_bury', 'walk_through', 'final', 'periodic')
AFTER = (*BEFORE, 'om_facility')
COLUMNS = (('inspections', 'type', 'inspection_type'), ('inspection_notices', 'inspection_type', 'notice_inspection_type'))


def _types_allowed(types: tuple[str, ...]) -> None:
    connection = op.get_bind()
    guards.drop(connection)
    for table, column, name in COLUMNS:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_constraint(op.f(f'ck_{table}_{name}'), type_='check')
            batch_op.alter_column(column, existing_type=sa.String(length=15),
                                  type_=sa.String(length=max(map(len, types))), existing_nullable=False)
            batch_op.create_check_constraint(name, f"{column} IN (" + ", ".join(f"'{t}'" for t in types) + ")")
    guards.create_for_schema_now(connection)


def upgrade():
    _types_allowed(AFTER)


def downgrade():
    # The reports of the O&M facility inspection are records: going down is refused while any is kept.
    kept = op.get_bind().execute(sa.text(
        "SELECT count(*) FROM inspections WHERE type = 'om_facility'")).scalar()
    noticed = op.get_bind().execute(sa.text(
        "SELECT count(*) FROM inspection_notices WHERE inspection_type = 'om_facility'")).scalar()
    if kept or noticed:
        raise RuntimeError("O&M facility inspections are stored: they cannot be kept below revision 0031")
    _types_allowed(BEFORE)
