from decimal import Decimal

from django.test import TestCase

from .models import Account, Entry


class LedgerTests(TestCase):
    databases = {"default", "other"}

    def test_entries_and_both_databases(self):
        a = Account.objects.create(owner="ann")
        Entry.objects.bulk_create([Entry(account=a, amount=Decimal("1.25")) for _ in range(4)])
        self.assertEqual(sum(e.amount for e in a.entries.all()), Decimal("5.00"))
        Account.objects.using("other").create(owner="bob")
        self.assertEqual(Account.objects.using("other").get().owner, "bob")
