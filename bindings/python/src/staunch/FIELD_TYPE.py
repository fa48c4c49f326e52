"""MySQL column type codes: ``cursor.description[i][1]``.

The one list of them: ``staunch.FIELD_TYPE`` is this module, and
``staunch.mysqldb.constants.FIELD_TYPE`` (``MySQLdb.constants.FIELD_TYPE``
after ``install_as_MySQLdb()``) re-exports it. It imports nothing, so both
packages can load it without an import cycle.
"""

DECIMAL = 0
TINY = 1
SHORT = 2
LONG = 3
FLOAT = 4
DOUBLE = 5
NULL = 6
TIMESTAMP = 7
LONGLONG = 8
INT24 = 9
DATE = 10
TIME = 11
DATETIME = 12
YEAR = 13
NEWDATE = 14
VARCHAR = 15
BIT = 16
JSON = 245
NEWDECIMAL = 246
ENUM = 247
SET = 248
TINY_BLOB = 249
MEDIUM_BLOB = 250
LONG_BLOB = 251
BLOB = 252
VAR_STRING = 253
STRING = 254
GEOMETRY = 255

# mysqlclient's and PyMySQL's aliases.
CHAR = TINY
INTERVAL = ENUM
