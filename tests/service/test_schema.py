"""The Alembic migrations build exactly the schema the models describe, on both databases."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import inspect

from qmcredit.service.db import Database, migrate
from qmcredit.service.models import Base


def test_migrations_match_the_models(database_url):
    db = Database(database_url)
    migrate(db.engine)
    migrate(db.engine)  # a second run finds nothing to do
    with db.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), Base.metadata)
        assert diff == []
        assert "alembic_version" in inspect(conn).get_table_names()
    db.dispose()
