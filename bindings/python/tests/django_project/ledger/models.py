from django.db import models


class Account(models.Model):
    owner = models.CharField(max_length=100)
    balance = models.DecimalField(max_digits=30, decimal_places=2, default=0)
    token = models.UUIDField(null=True)
    photo = models.BinaryField(null=True)


class Entry(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="entries")
    amount = models.DecimalField(max_digits=30, decimal_places=2)
    memo = models.TextField(blank=True)

    class Meta:
        constraints = [models.CheckConstraint(condition=~models.Q(amount=0), name="entry_amount_nonzero")]
