"""``MySQLdb.constants``: the names mysqlclient's users import."""

from . import CLIENT, ER, FIELD_TYPE, FLAG  # noqa: F401
