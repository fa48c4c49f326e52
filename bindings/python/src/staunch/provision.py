"""SQLAlchemy's test provisioning for the staunch dialects.

SQLAlchemy's test plugin imports the ``provision`` module beside a dialect
(``Dialect.load_provisioning``) so that its suite can create and drop the
databases it needs (``test_schema``, ``test_schema_2``, one set per pytest-xdist
worker, in utf8mb4), clear tables and make temporary tables. Its hooks are
chosen by the backend (``mysql`` / ``mariadb``), not the driver, so staunch
uses SQLAlchemy's own MySQL/MariaDB hooks: importing them registers them.
Only the test plugin imports this module.
"""

from sqlalchemy.dialects.mysql import provision  # noqa: F401
