"""Extensions made at module level and bound to the app in `create_app` with `init_app`."""
from flask_htmx import HTMX
from flask_limiter import Limiter
from flask_limiter.util import get_remote_address
from flask_login import LoginManager
from flask_sqlalchemy import SQLAlchemy
from flask_wtf import CSRFProtect
from sqlalchemy import MetaData, event, select
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase

# Constraint names that Alembic can rely on, the same on SQLite and PostgreSQL.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


db = SQLAlchemy(model_class=Base)
login_manager = LoginManager()
csrf = CSRFProtect()
htmx = HTMX()
# Only /verify is limited through it (documents/views.py); the sign-in throttle (accounts/throttle.py) uses its
# storage: RATELIMIT_STORAGE_URI, the database by default (inspect_app/rate_limits.py).
limiter = Limiter(key_func=get_remote_address, default_limits=[])


@event.listens_for(Engine, "connect")
def _sqlite_foreign_keys(dbapi_connection, connection_record) -> None:
    # SQLite checks foreign keys only when asked, on every connection; PostgreSQL always does.
    # WAL lets the sync worker write while pages read, and makes each commit one cheap append.
    if type(dbapi_connection).__module__.startswith("sqlite3"):
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.close()


def begin_write() -> None:
    """Open the write transaction now; on SQLite with its write lock taken up front (BEGIN IMMEDIATE).

    pysqlite opens a transaction lazily, at the first INSERT: a SAVEPOINT before that would open (and
    its RELEASE commit) a transaction of its own, and a check read before it sees the database without another
    writer's change that is about to commit. Taking the lock at once also means a transaction never has to
    upgrade a read snapshot that another writer has moved past (which SQLite refuses, busy timeout or not).
    Already writing, it holds the lock. PostgreSQL: nothing (its row locks are taken where they are needed).
    """
    connection = db.session.connection()
    if connection.dialect.name == "sqlite" and not connection.connection.dbapi_connection.in_transaction:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def hold(model, key):
    """Hold one row of `model` until the transaction ends, and read it again as it is now (the session's object of it,
    if it has one, takes its values): of two requests changing it at once, the second waits, then sees what the first
    did. PostgreSQL: FOR NO KEY UPDATE, which the rows referring to it do not wait for; SQLite: the database's write
    lock (`begin_write`)."""
    begin_write()
    return db.session.execute(select(model).where(model.id == key).with_for_update(key_share=True, of=model)
                              .execution_options(populate_existing=True)).scalar_one()
