"""The jobs of mail: deliver one outbox message; queue the receipts of received invoices still owed one."""

from __future__ import annotations

from typing import Any

from varco.core import jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.mail import delivery, receipts, service


def register(registry: jobs.Registry) -> None:
    registry.add(service.DELIVER, deliver)
    registry.reconciler(receipts.queue_pending_receipts)


def deliver(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    delivery.deliver(uow, int(args["message_id"]), clock)
