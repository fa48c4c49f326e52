"""Run by Django's own test runner (`manage.py test`) on staunch."""

from decimal import Decimal

from django.db import IntegrityError, transaction
from django.test import TestCase, TransactionTestCase

from .models import Order, Product, Review


class ProductTests(TestCase):
    def setUp(self):
        self.p = Product.objects.create(sku="T-1", name="tea", price=Decimal("3.50"), stock=3)

    def test_order_and_aggregate(self):
        from django.db.models import Sum

        Order.objects.create(product=self.p, quantity=2)
        Order.objects.create(product=self.p, quantity=5)
        self.assertEqual(Order.objects.aggregate(n=Sum("quantity"))["n"], 7)

    def test_unique_sku(self):
        with self.assertRaises(IntegrityError), transaction.atomic():
            Product.objects.create(sku="T-1", name="again", price=1)
        self.assertEqual(Product.objects.count(), 1)

    def test_reviews_cascade(self):
        Review.objects.create(product=self.p, text="good")
        Order.objects.all().delete()
        self.p.delete()
        self.assertFalse(Review.objects.exists())


class LockingTests(TransactionTestCase):
    def test_select_for_update_in_atomic(self):
        p = Product.objects.create(sku="L-1", name="lock", price=1, stock=1)
        with transaction.atomic():
            q = Product.objects.select_for_update().get(pk=p.pk)
            q.stock = 0
            q.save()
        self.assertEqual(Product.objects.get(pk=p.pk).stock, 0)
