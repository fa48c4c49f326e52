"""SQLAlchemy's dialect compliance suite, as published (pinned SQLAlchemy)."""

from sqlalchemy.testing.suite import *  # noqa: F403
from sqlalchemy.testing.suite import ServerSideCursorsTest as _ServerSideCursorsTest


class ServerSideCursorsTest(_ServerSideCursorsTest):
    def _is_server_side(self, cursor):
        # The suite's own check knows only the drivers it names; staunch's
        # cursors say it themselves, as aiomysql's and oracledb's do.
        if self.engine.dialect.driver in ("staunch", "staunch_async"):
            return cursor.server_side
        return super()._is_server_side(cursor)
