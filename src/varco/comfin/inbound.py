"""What comes back from the Exchange System about a communication: its esito (SdITrasmissioneFile
polling, or the simulator's answer). Kept apart from `service`, which sends through the channel,
so that a channel may deliver here without importing what sends through it."""

from __future__ import annotations

import logging
from datetime import datetime

from varco.comfin import states, xsd
from varco.comfin.models import ComfinRequest
from varco.comfin.repository import ComfinRepository
from varco.core import blobs, jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.fatturapa.errors import FatturaPAError
from varco.fatturapa.parsing import parse_xml, text_at

log = logging.getLogger("varco.comfin")

SEAL = jobs.Task("comfin.seal", ("request_pk",))  # run by comfin.tasks.seal


def record_receipt(session: UnitOfWork, pk: int, file_id: str, received_at: datetime, clock: Clock) -> None:
    """The SDI took the communication: its IDFile and time (once; a second answer changes nothing)."""
    request = ComfinRepository(session).get_for_update(pk)
    if request is None or request.file_id is not None:
        return
    request.file_id, request.receipt_at = file_id, received_at
    request.status, request.updated_at = "SENT", clock.now()


def receive_outcome(
    session: UnitOfWork, file_id: str, filename: str, xml: bytes, clock: Clock, *, state: str = "SF02"
) -> ComfinRequest | None:
    """The SDI's EsitoFile for a sent communication: store it, SF02 (or the SDI's SF03, a final
    error), and seal the package after commit."""
    repo = ComfinRepository(session)
    found = repo.by_file_id(file_id)
    if found is None:
        log.warning("esito %s for unknown IDFile %s ignored", filename, file_id)
        return None
    request = repo.get_for_update(found.id)
    assert request is not None
    if request.notify_blob_id is not None:
        return request  # duplicate delivery: nothing changes
    now = clock.now()
    esito = _read_esito(xml)
    request.notify_blob_id = blobs.store(session, filename, xml, request.account_id, now).id
    request.notify_filename = filename
    if esito is None:
        request.result = states.next_result(request.result, "SF03")
        request.error = "The Exchange System's answer could not be read"
    else:
        request.result = states.next_result(request.result, "SF03" if state == "SF03" else "SF02")
        request.elaborated_result = esito
        if state == "SF03":
            request.error = f"The Exchange System ended the file in error (SF03, esito {esito})"
    request.status, request.updated_at = states.STATUS[request.result], now
    jobs.enqueue(session, SEAL, key=f"comfin.seal:{request.id}", clock=clock, request_pk=request.id)
    return request


def _read_esito(xml: bytes) -> str | None:
    try:
        root = parse_xml(xml)
    except FatturaPAError:
        return None
    if xsd.errors(root, "ESITO"):
        return None
    return text_at(root, "Esito")
