"""Packages of financial communications: the same chain per account as invoices (docs/comfin.md).

The comfin service hands over what to preserve (the file as sent, the SDI's esito, the facts of
the request); this module links it into the account's chain exactly as invoices are linked.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from varco.core import blobs
from varco.core.clock import Clock
from varco.preservation import package
from varco.preservation.models import PreservationPackage
from varco.preservation.repository import PreservationRepository
from varco.preservation.service import ChainContention

log = logging.getLogger("varco.preservation")
_RACE_RETRIES = 5


def seal_communication(
    session: Session,
    *,
    comfin_request_id: int,
    account_id: int,
    name: str,
    subject: dict[str, Any],
    files: list[package.PackedFile],
    clock: Clock,
) -> PreservationPackage:
    """Seal a communication's package as the next link of the account's chain (idempotent per file set)."""
    repo = PreservationRepository(session)
    for _ in range(_RACE_RETRIES):
        latest = repo.latest_for_communication(comfin_request_id)
        if latest is not None and latest.notification_count == len(files) - 1:
            return latest  # nothing new since the last seal
        head = repo.chain_head(account_id)
        spec = package.PackageSpec(
            sequence=head.sequence + 1 if head else 1,
            version=latest.version + 1 if latest else 1,
            sealed_at=clock.now(),
            previous_sha256=head.sha256 if head else None,
            subject=subject,
            files=files,
        )
        content = package.build(spec)
        try:
            # Savepoint: a lost race on (account, sequence) retries on the new head (see service).
            with session.begin_nested():
                blob = blobs.store(session, name, content, account_id, spec.sealed_at)
                sealed = PreservationPackage(
                    account_id=account_id,
                    sequence=spec.sequence,
                    invoice_id=None,
                    comfin_request_id=comfin_request_id,
                    version=spec.version,
                    notification_count=len(files) - 1,
                    blob_id=blob.id,
                    name=name,
                    sha256=package.sha256(content),
                    previous_sha256=spec.previous_sha256,
                    sealed_at=spec.sealed_at,
                )
                session.add(sealed)
                session.flush()
        except IntegrityError:
            log.info("communication %s: chain of account %s moved; retrying", comfin_request_id, account_id)
            continue
        log.info(
            "communication %s sealed as package %s of account %s",
            comfin_request_id,
            spec.sequence,
            account_id,
        )
        return sealed
    raise ChainContention(
        f"could not seal communication {comfin_request_id}: the package chain kept changing"
    )


def latest_communication_package(session: Session, comfin_request_id: int) -> tuple[str, bytes] | None:
    """(file name, ZIP bytes) of the communication's newest package, or None."""
    repo = PreservationRepository(session)
    latest = repo.latest_for_communication(comfin_request_id)
    if latest is None:
        return None
    return latest.name, repo.content(latest.blob_id)
