"""The ORM on staunch, run by tests/test_django.py after `manage.py migrate`:
CRUD, connection.queries, select_for_update inside transaction.atomic, an
IntegrityError, bulk_create, and one staunch pool per DATABASES entry. Prints
"ok" at the end; any failed check raises."""

import datetime as dt
import os
import threading
import uuid
from decimal import Decimal

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "site_conf.settings")
import django  # noqa: E402

django.setup()

from django.db import IntegrityError, close_old_connections, connection, connections, transaction  # noqa: E402
from django.db.models import F  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402
from ledger.models import Account, Entry  # noqa: E402
from shop.models import Order, Product  # noqa: E402

import staunch  # noqa: E402

# CRUD
p = Product.objects.create(
    sku="A-1", name="Grüße 🍵", price=Decimal("12.34"), stock=5, added=dt.date(2012, 10, 15), opens=dt.time(9, 30)
)
p.data = {"tags": ["x", "y"], "n": 1}
p.save()
got = Product.objects.get(pk=p.pk)
assert (got.name, got.price, got.added, got.opens) == (
    "Grüße 🍵",
    Decimal("12.34"),
    dt.date(2012, 10, 15),
    dt.time(9, 30),
), got.__dict__
assert got.data == {"tags": ["x", "y"], "n": 1} and got.label == "it's \\ 100%", (got.data, got.label)
assert Product.objects.filter(name__contains="🍵").count() == 1

# connection.queries (CaptureQueriesContext's and the debug toolbar's source)
# shows each statement as sent, its parameters written in (mysqlclient's
# cursor._executed), and the text runs as the statement did
with CaptureQueriesContext(connection) as captured:
    assert [x.pk for x in Product.objects.filter(sku="A-1", name="Grüße 🍵", stock__gte=5)] == [p.pk]
shown = captured.captured_queries[-1]["sql"]
assert shown.startswith("SELECT ") and "`shop_product`.`sku` = 'A-1'" in shown, shown
assert "`shop_product`.`name` = 'Grüße 🍵'" in shown and "`shop_product`.`stock` >= 5" in shown, shown
with connection.cursor() as c:
    c.execute(shown)
    assert [r[0] for r in c.fetchall()] == [p.pk], shown
assert Product.objects.filter(sku="A-1").update(stock=5) == 1  # matched rows (FOUND_ROWS), not changed rows
Order.objects.create(product=p, quantity=2)
assert list(Order.objects.filter(product__sku="A-1").values_list("quantity", flat=True)) == [2]
tok = uuid.uuid4()
# BinaryField: Django writes `_binary %s`, which needs the value interpolated (the default)
a = Account.objects.create(owner="ann", balance=Decimal("1234567890123456789.01"), token=tok, photo=b"\x00\xff\x00")
a = Account.objects.get(token=tok)
assert a.balance == Decimal("1234567890123456789.01") and bytes(a.photo) == b"\x00\xff\x00", (a.balance, a.photo)
# decimal arithmetic with a bound Decimal stays exact
Account.objects.filter(pk=a.pk).update(balance=F("balance") + Decimal("0.01"))
assert Account.objects.get(pk=a.pk).balance == Decimal("1234567890123456789.02")

# select_for_update inside atomic: a second thread waits for the lock
order = []


def other():
    close_old_connections()
    with transaction.atomic():
        Product.objects.select_for_update().get(pk=p.pk)
        order.append("other")
    connections.close_all()


with transaction.atomic():
    locked = Product.objects.select_for_update().get(pk=p.pk)
    t = threading.Thread(target=other)
    t.start()
    t.join(0.5)
    assert t.is_alive(), "the other transaction did not wait for the row lock"
    locked.stock -= 1
    locked.save()
    order.append("first")
t.join(10)
assert order == ["first", "other"], order
assert Product.objects.get(pk=p.pk).stock == 4

# IntegrityError: the duplicate sku, the protected foreign key, the check constraint
try:
    with transaction.atomic():
        Product.objects.create(sku="A-1", name="dup", price=1)
    raise AssertionError("a duplicate sku was accepted")
except IntegrityError as e:
    assert e.args[0] == 1062, e.args
try:
    with transaction.atomic():
        p.delete()
    raise AssertionError("a product with orders was deleted")
except django.db.models.ProtectedError:
    pass
try:
    with transaction.atomic():
        Entry.objects.create(account=a, amount=0)
    raise AssertionError("the check constraint let 0 through")
except IntegrityError:
    pass
# an atomic block rolled back leaves nothing behind
try:
    with transaction.atomic():
        Product.objects.create(sku="R-1", name="rolled back", price=1)
        raise RuntimeError("roll back")
except RuntimeError:
    pass
assert not Product.objects.filter(sku="R-1").exists()

# bulk_create, then delete
made = Product.objects.bulk_create([Product(sku=f"B-{i}", name=f"bulk {i}", price=Decimal(i)) for i in range(50)])
assert len(made) == 50 and Product.objects.filter(sku__startswith="B-").count() == 50
assert all(m.pk for m in made), "bulk_create did not set primary keys"
assert Product.objects.filter(sku__startswith="B-").delete()[0] == 50

# the second database, and one staunch pool per DATABASES entry
Account.objects.using("other").create(owner="bob")
assert Account.objects.using("other").count() == 1 and Account.objects.count() == 1
for _ in range(5):
    connections.close_all()
    Product.objects.count()
    Account.objects.using("other").count()
connections.close_all()
pools = [p for p in staunch._shared.values() if not p.closed]
assert len(pools) == 2, f"{len(pools)} staunch pools for 2 DATABASES entries"
for pool in pools:
    s = pool.stats()
    assert s.active == 0 and s.acquired >= 6, s.as_dict()
print("ok")
