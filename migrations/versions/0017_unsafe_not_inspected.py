"""a checklist item not inspected because it was unsafe (answer "unsafe", with the reason in its note)

Revision ID: 0017
Revises: 0016
"""
from alembic import op
import sqlalchemy as sa


revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def _answers_allowed(old_length: int, answers: tuple[str, ...]) -> None:
    """Re-make the answer column's check (and its length) to allow exactly `answers`."""
    with op.batch_alter_table('checklist_answers', schema=None) as batch_op:
        batch_op.drop_constraint(op.f('ck_checklist_answers_checklist_answer'), type_='check')
        batch_op.alter_column('answer', existing_type=sa.String(length=old_length),
                              type_=sa.String(length=max(map(len, answers))), existing_nullable=False)
        batch_op.create_check_constraint('checklist_answer',
                                         "answer IN (" + ", ".join(f"'{a}'" for a in answers) + ")")


def upgrade():
    _answers_allowed(3, ('yes', 'no', 'na', 'unsafe'))


def downgrade():
    # An item not inspected has no answer in the older schema: it goes back to unanswered.
    op.execute("DELETE FROM checklist_answers WHERE answer = 'unsafe'")
    _answers_allowed(6, ('yes', 'no', 'na'))
