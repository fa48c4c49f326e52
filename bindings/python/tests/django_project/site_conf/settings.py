"""Settings: Django's own MySQL backend, with staunch standing in for mysqlclient.

The server comes from STAUNCH_DJANGO_DB (host:port, root without a password,
as the test kit's servers have), so Django's test runner may create its test
database.
"""

import os

import staunch

staunch.install_as_MySQLdb()

host, port = os.environ["STAUNCH_DJANGO_DB"].rsplit(":", 1)

SECRET_KEY = "staunch-django-test-only"  # noqa: S105 (a test project)
DEBUG = False
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
INSTALLED_APPS = ["django.contrib.contenttypes", "django.contrib.auth", "shop", "ledger"]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.mysql",
        "NAME": "django_app",
        "USER": "root",
        "HOST": host,
        "PORT": port,
        "TEST": {"NAME": "test_django_app"},
    },
    "other": {
        "ENGINE": "django.db.backends.mysql",
        "NAME": "django_other",
        "USER": "root",
        "HOST": host,
        "PORT": port,
        "TEST": {"NAME": "test_django_other"},
    },
}
