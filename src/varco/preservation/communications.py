"""Packages of financial communications: the same chain per account as invoices (docs/comfin.md).

The comfin service hands over what to preserve (the file as sent, the SDI's esito, the facts of
the request); this module links it into the account's chain exactly as invoices are linked.
"""

from __future__ import annotations

from typing import Any

from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.preservation import package, service
from varco.preservation.models import PreservationPackage
from varco.preservation.repository import PreservationRepository


def seal_communication(
    session: UnitOfWork,
    *,
    comfin_request_id: int,
    account_id: int,
    name: str,
    subject: dict[str, Any],
    files: list[package.PackedFile],
    clock: Clock,
) -> PreservationPackage:
    """Seal a communication's package as the next link of the account's chain (idempotent per file set)."""
    sealable = service.Sealable(account_id, name, subject, lambda: files, comfin_request_id=comfin_request_id)
    return service.seal(session, sealable, clock)


def latest_communication_package(session: UnitOfWork, comfin_request_id: int) -> tuple[str, bytes] | None:
    """(file name, ZIP bytes) of the communication's newest package, or None."""
    repo = PreservationRepository(session)
    latest = repo.latest_for_communication(comfin_request_id)
    if latest is None:
        return None
    return latest.name, repo.content(latest.blob_id)
