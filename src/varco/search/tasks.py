"""The jobs of search: the steps of a bulk download, and the deletion of expired ones."""

from __future__ import annotations

from typing import Any

from varco.core import jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.search import downloads


def register(registry: jobs.Registry) -> None:
    registry.add(downloads.STEP, build_step)
    registry.reconciler(downloads.delete_expired_downloads)


def build_step(uow: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    downloads.build_step(uow, str(args["job_id"]), int(args["step"]), clock)
