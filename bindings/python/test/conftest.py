"""SQLAlchemy's third-party dialect suite (README.dialects.rst): boots its
pytest plugin. The URLs come from setup.cfg's [db] section or --dburi
(scripts/python-suites.sh starts a test-kit server and passes them)."""

import pytest

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

# staunch's dialects, as the package's entry points register them (for a
# checkout on PYTHONPATH that is not installed).
from sqlalchemy.dialects import registry  # noqa: E402
from sqlalchemy.testing.plugin.pytestplugin import *  # noqa: E402, F403

registry.register("mariadb.staunch", "staunch.sqlalchemy_dialect", "StaunchMariaDBDialect")
registry.register("mariadb.staunch_async", "staunch.sqlalchemy_async", "StaunchAsyncMariaDBDialect")
