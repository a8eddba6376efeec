"""a checklist item not inspected because it was unsafe (answer "unsafe", with the reason in its note)

Revision ID: 0014
Revises: 0012
"""
from alembic import op
import sqlalchemy as sa


revision = '0014'
down_revision = '0012'
branch_labels = None
depends_on = None

_CHECK = 'ck_checklist_answers_checklist_answer'


def _answers(*answers: str) -> str:
    return "answer IN (" + ", ".join(f"'{a}'" for a in answers) + ")"


def upgrade():
    with op.batch_alter_table('checklist_answers', schema=None) as batch_op:
        batch_op.drop_constraint(op.f(_CHECK), type_='check')
        batch_op.alter_column('answer', existing_type=sa.String(length=3), type_=sa.String(length=6),
                              existing_nullable=False)
        batch_op.create_check_constraint('checklist_answer', _answers('yes', 'no', 'na', 'unsafe'))


def downgrade():
    # An area not inspected has no answer in the older schema: it goes back to unanswered.
    op.execute("DELETE FROM checklist_answers WHERE answer = 'unsafe'")
    with op.batch_alter_table('checklist_answers', schema=None) as batch_op:
        batch_op.drop_constraint(op.f(_CHECK), type_='check')
        batch_op.alter_column('answer', existing_type=sa.String(length=6), type_=sa.String(length=3),
                              existing_nullable=False)
        batch_op.create_check_constraint('checklist_answer', _answers('yes', 'no', 'na'))
