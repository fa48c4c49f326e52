"""Django on staunch (staunch.install_as_MySQLdb): the project in
tests/django_project, two apps with migrations, against the session's
test-kit server. Each step runs in its own process, as Django's commands do."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("django")

PROJECT = Path(__file__).resolve().parent / "django_project"


@pytest.fixture(scope="module")
def django_env(server):
    for db in ("django_app", "django_other"):
        server.sql(f"DROP DATABASE IF EXISTS {db}")
        server.sql(f"CREATE DATABASE {db} CHARACTER SET utf8mb4")
    env = dict(os.environ)
    env["STAUNCH_DJANGO_DB"] = f"127.0.0.1:{server.server['port']}"
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT), *filter(None, [env.get("PYTHONPATH")])])
    return env


def run(env, *args, timeout=240) -> str:
    p = subprocess.run(
        [sys.executable, *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    out = p.stdout + p.stderr
    assert p.returncode == 0, f"{' '.join(args)} exited {p.returncode}:\n{out[-4000:]}"
    return out


def test_django_migrate_orm_and_test_runner(django_env, server):
    run(django_env, "manage.py", "migrate", "--noinput", "shop", "0001")
    # A row from before shop.0002, which adds a column whose default (a quote,
    # a backslash, a percent sign) Django writes into the ALTER TABLE through
    # the MySQLdb API's escape(): the row must get it exactly.
    server.sql("INSERT INTO django_app.shop_product (sku, name, price, stock, data) VALUES ('d', 'd', 1, 0, '{}')")
    out = run(django_env, "manage.py", "migrate", "--noinput")
    assert "Applying shop.0002_product_label_review... OK" in out, out
    assert server.query("SELECT label FROM django_app.shop_product WHERE sku = 'd'") == [["it's \\ 100%"]]
    server.sql("DELETE FROM django_app.shop_product")
    run(django_env, "manage.py", "migrate", "--noinput", "--database", "other")
    tables = {
        r[0] for r in server.query("SELECT table_name FROM information_schema.tables WHERE table_schema = 'django_app'")
    }
    assert {"shop_product", "shop_order", "shop_review", "ledger_account", "ledger_entry", "auth_user"} <= tables

    assert run(django_env, "orm_checks.py").strip().endswith("ok")

    out = run(django_env, "manage.py", "test", "--noinput", "-v", "2")
    assert "Ran 5 tests" in out and "\nOK" in out, out[-3000:]
