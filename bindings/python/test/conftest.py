"""SQLAlchemy's third-party dialect suite (README.dialects.rst): boots its
pytest plugin. The URLs come from setup.cfg's [db] section or --dburi
(scripts/python-suites.sh starts a test-kit server and passes them)."""

import pytest

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

from sqlalchemy.testing.plugin.pytestplugin import *  # noqa: E402, F403
