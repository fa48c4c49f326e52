"""``MySQLdb.constants.FIELD_TYPE``: the column type codes of ``staunch.FIELD_TYPE``, their one list."""

from ...FIELD_TYPE import *  # noqa: F403
