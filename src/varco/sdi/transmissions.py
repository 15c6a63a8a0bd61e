"""The calls varco owes the SDI over SDICoop (`sdicoop_channel.owe`), each made by a job: the row is
claimed in the job's transaction, the SOAP call runs after that commit (no lock held while the SDI
answers), and the answer is recorded in a transaction of its own.

What the SDI answered decides: an id (IdentificativoSdI, IDFile) is recorded and the invoice or
communication moves on; EI02/ES02/EE01 ("service unavailable") and a call that certainly did not
arrive are tried again with back-off; EI01/EI03/EI04/EE02 are permanent (docs/sdicoop.md). A call
the SDI may have received without our knowing (the answer lost, the worker killed after the
claim) becomes UNKNOWN and is not made again until `sdicoop_unknown_resend_after`: the SDI's
notifications name the file and settle it before that (`inbound.adopt`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any

from sqlalchemy import bindparam, select

from varco.comfin import inbound as comfin_inbound
from varco.comfin import service as comfin
from varco.comfin.models import ComfinRequest
from varco.core import blobs, metrics
from varco.core.clock import Clock, current_clock
from varco.core.db import get_for_update, unit_of_work
from varco.core.uow import UnitOfWork
from varco.invoices import service as invoices
from varco.invoices.models import Invoice
from varco.invoices.states import InvoiceEvent, InvoiceState
from varco.sdi import esito as esiti
from varco.sdi.channel import OutcomeReceipt
from varco.sdi.models import EsitoCommittente, SdiExchange, SdiTransmission
from varco.sdi.sdicoop.client import ClientConfig, EndpointMissing, SdiClient
from varco.sdi.sdicoop.errors import MaybeReceived, NotReceived, SdiCallError
from varco.sdi.sdicoop.payloads import Exchange, StatoFile, TipoFile
from varco.sdi.sdicoop_channel import DONE, FAILED, IN_FLIGHT, PENDING, UNKNOWN, job_waiting, owe, wake
from varco.settings import Settings, get_settings

log = logging.getLogger("varco.sdicoop")

_RETRY = {"EI02", "ES02", "EE01"}  # "servizio non disponibile"
_LEASE_MARGIN = timedelta(minutes=2)  # past the call's timeout, a claim whose answer never came


@dataclass(frozen=True)
class Answer:
    """What a call came to: `id` accepted; `retry` try again later; `unknown` the SDI may have it;
    `failed` permanent. `value` carries the operation's answer."""

    kind: str  # accepted | retry | unknown | failed
    detail: str = ""
    value: Any = None
    exchange: Exchange | None = None


# -- the job -----------------------------------------------------------------------------------


def call(session: UnitOfWork, transmission_id: int, clock: Clock) -> None:
    """Claim the row if it is due, and make its call once this transaction has committed."""
    row = get_for_update(session, SdiTransmission, transmission_id)
    now = clock.now()
    if row is None or row.status != PENDING or row.next_attempt_at > now:
        return  # done, settled, not due, or claimed by another worker: a duplicate wake-up
    request = _request_of(session, row)
    if request is None:
        _finish(row, DONE, "nothing left to send", now)
        return
    row.status, row.attempts, row.claimed_at, row.updated_at = IN_FLIGHT, row.attempts + 1, now, now
    session.on_commit(partial(_call_and_record, row.id, request))


def _call_and_record(transmission_id: int, request: Callable[[SdiClient], Answer]) -> None:
    """After the claim's commit (an after-commit hook: it never raises)."""
    settings, clock = get_settings(), current_clock()
    try:
        answer = request(_client(settings))
    except (NotConfigured, EndpointMissing) as exc:  # nothing was sent: an operator's setting
        log.error("SDICoop transmission %s: %s", transmission_id, exc)
        answer = Answer("retry", str(exc))
    except NotReceived as exc:  # connection refused, TLS refused, a Client fault: not taken
        answer = Answer("retry", str(exc), exchange=exc.exchange)
    except MaybeReceived as exc:  # sent, and no usable answer: the SDI may have it
        answer = Answer("unknown", str(exc), exchange=exc.exchange)
    except SdiCallError as exc:
        answer = Answer("unknown", str(exc), exchange=exc.exchange)
    except ValueError as exc:  # refused before any I/O (the XSD: a NomeFile the SDI never takes)
        answer = Answer("failed", str(exc))
    except Exception as exc:  # noqa: BLE001 - whatever happened, the row must say so
        log.exception("SDICoop transmission %s: the call failed", transmission_id)
        answer = Answer("unknown", f"{type(exc).__name__}: {exc}")
    operation = _OPERATIONS.get(getattr(request, "func", None), "other")
    metrics.count(metrics.SDI_CALLS, "sdicoop", operation, answer.kind)
    try:
        with unit_of_work() as session:
            record(session, transmission_id, answer, settings, clock)
    except Exception:  # noqa: BLE001 - the claim expires and the reconciler settles the row
        log.exception("SDICoop transmission %s: the answer was not recorded", transmission_id)


_clients = threading.local()


def _client(settings: Settings) -> SdiClient:
    """One client per worker thread (a requests Session is not promised thread-safe), rebuilt
    when the settings change."""
    if settings.sdicoop_cert is None or settings.sdicoop_key is None:
        raise NotConfigured("VARCO_SDICOOP_CERT and VARCO_SDICOOP_KEY are not set")
    config = ClientConfig(
        cert_path=settings.sdicoop_cert,
        key_path=settings.sdicoop_key,
        ca_path=settings.sdicoop_ca,
        ricevi_file_url=settings.sdicoop_ricevi_file_url,
        ricevi_notifica_url=settings.sdicoop_ricevi_notifica_url,
        trasmissione_file_url=settings.sdicoop_trasmissione_file_url,
        timeout_seconds=settings.sdicoop_timeout_seconds,
    )
    current = getattr(_clients, "client", None)
    if current is None or current.config != config:
        if current is not None:
            current.close()
        current = _clients.client = SdiClient(config)
    return current


class NotConfigured(Exception):
    """The channel is not configured: nothing was sent (an operator must set the certificates)."""


# -- what each kind of row sends ---------------------------------------------------------------


def _request_of(session: UnitOfWork, row: SdiTransmission) -> Callable[[SdiClient], Answer] | None:
    """The call to make, with everything read now (the call runs outside this transaction)."""
    if row.kind == "invoice":
        invoice = session.get(Invoice, row.ref_id)
        if invoice is None or invoice.sdi_id is not None:
            return None  # settled meanwhile (a notification named it)
        content = blobs.content(session, invoice.blob_id)
        return partial(_ricevi_file, row.filename, content)
    if row.kind == "esito":
        esito = session.get(EsitoCommittente, row.ref_id)
        if esito is None or esito.status != "SENT":
            return None
        content = blobs.content(session, esito.blob_id)
        return partial(_notifica_esito, int(esito.sdi_id), esito.esito_filename, content)
    request = session.get(ComfinRequest, row.ref_id)
    if request is None:
        return None
    if row.kind == "communication":
        if request.file_id is not None or request.result != "SF01":
            return None  # answered meanwhile, or given up (AR06)
        content = blobs.content(session, request.blob_id)
        kind = TipoFile.FL if request.is_zip else TipoFile(request.kind)
        return partial(_trasmetti, request.file_name, kind, content)
    if request.file_id is None or request.notify_blob_id is not None:
        return None  # "poll": nothing to ask yet, or answered already
    return partial(_esito, int(request.file_id))


def _ricevi_file(name: str, content: bytes, client: SdiClient) -> Answer:
    answer = client.ricevi_file(name, content)
    return _coded(answer.errore, (answer.identificativo_sdi, answer.data_ora_ricezione), answer.exchange)


def _notifica_esito(sdi_id: int, name: str, content: bytes, client: SdiClient) -> Answer:
    answer = client.notifica_esito(sdi_id, name, content)
    if answer.esito == "ES02":
        return Answer("retry", "ES02: service unavailable", exchange=answer.exchange)
    return Answer("accepted", answer.esito, value=answer.scarto_esito, exchange=answer.exchange)


def _trasmetti(name: str, kind: TipoFile, content: bytes, client: SdiClient) -> Answer:
    answer = client.trasmetti(name, kind, content)
    return _coded(answer.errore, (answer.id_file, answer.data_ora_ricezione), answer.exchange)


def _esito(file_id: int, client: SdiClient) -> Answer:
    answer = client.esito(file_id)
    if answer.errore is not None:
        return _coded(answer.errore, None, answer.exchange)
    return Answer("accepted", answer.esito, value=answer.notifica, exchange=answer.exchange)


_OPERATIONS: dict[object, str] = {  # the label of each call in /metrics
    _ricevi_file: "RiceviFile",
    _notifica_esito: "NotificaEsito",
    _trasmetti: "Trasmetti",
    _esito: "Esito",
}


def _coded(errore: Any, value: Any, exchange: Exchange) -> Answer:
    if errore is None:
        return Answer("accepted", value=value, exchange=exchange)
    kind = "retry" if str(errore) in _RETRY else "failed"
    return Answer(kind, f"{errore}: {_ERRORS.get(str(errore), 'error')}", exchange=exchange)


_ERRORS = {
    "EI01": "empty file",
    "EI02": "service unavailable",
    "EI03": "user not enabled",
    "EI04": "wrong file type",
    "EE01": "service unavailable",
    "EE02": "user not enabled",
}


# -- recording the answer ----------------------------------------------------------------------


_OWNER = select(SdiTransmission.kind, SdiTransmission.ref_id).where(SdiTransmission.id == bindparam("id"))


def record(
    session: UnitOfWork, transmission_id: int, answer: Answer, settings: Settings, clock: Clock
) -> None:
    """Write down what the call came to, and what it causes."""
    # Lock order: an invoice before its transmission, as a notification that adopts the invoice
    # takes them (inbound._adopted: the invoice, then `settle`). Taken the other way round, an RC
    # arriving while its call's answer is recorded would deadlock with it on PostgreSQL.
    owner = session.execute(_OWNER, {"id": transmission_id}).first()
    if owner is not None and owner.kind == "invoice":
        invoices.lock_invoice(session, owner.ref_id)
    row = get_for_update(session, SdiTransmission, transmission_id)
    if row is None or row.status not in (IN_FLIGHT, UNKNOWN):
        return  # settled meanwhile (a notification named it, or the reconciler asks again)
    if row.status == UNKNOWN and answer.kind != "accepted":
        return  # the reconciler gave the claim up as unknown; only the SDI's id settles it now
    now = clock.now()
    if answer.exchange is not None:
        _store_exchange(session, row, answer.exchange, answer.detail, now)
    if answer.kind == "retry":
        _retry(session, row, answer.detail, settings, clock)
    elif answer.kind == "unknown":
        _finish(row, UNKNOWN, answer.detail, now)
        log.warning("SDICoop %s %s: the SDI may have it (%s)", row.kind, row.filename, answer.detail)
    elif answer.kind == "failed":
        _finish(row, FAILED, answer.detail, now)
        _refused(session, row, answer.detail, clock)
    else:
        _accepted(session, row, answer, settings, clock)


def _retry(session: UnitOfWork, row: SdiTransmission, detail: str, settings: Settings, clock: Clock) -> None:
    delay = min(settings.sdicoop_retry_base * 2 ** max(row.attempts - 1, 0), settings.sdicoop_retry_max_delay)
    row.status, row.last_error, row.updated_at = PENDING, detail[:500], clock.now()
    row.next_attempt_at = clock.now() + delay
    wake(session, row, clock)


def _finish(row: SdiTransmission, status: str, detail: str | None, now: datetime) -> None:
    row.status, row.updated_at = status, now
    if detail is not None:
        row.last_error = detail[:500]


def _accepted(
    session: UnitOfWork, row: SdiTransmission, answer: Answer, settings: Settings, clock: Clock
) -> None:
    now = clock.now()
    if row.kind == "invoice":
        sdi_id, received_at = answer.value
        row.answer_id = str(sdi_id)
        _finish(row, DONE, None, now)
        invoice = invoices.lock_invoice(session, row.ref_id)  # read once: record_sent moves it
        if invoice is not None and invoice.sdi_id is None:
            invoices.record_sent(session, invoice, str(sdi_id), received_at or now, clock)
    elif row.kind == "esito":
        _finish(row, DONE, None, now)
        esito = session.get(EsitoCommittente, row.ref_id)
        if esito is not None:
            scarto = answer.value
            receipt = OutcomeReceipt(
                accepted=answer.detail == "ES01",
                scarto_filename=scarto.nome_file if scarto else None,
                scarto_xml=scarto.file if scarto else None,
            )
            esiti.record_receipt(session, esito, receipt, clock)
    elif row.kind == "communication":
        file_id, received_at = answer.value
        row.answer_id = str(file_id)
        _finish(row, DONE, None, now)
        comfin_inbound.record_receipt(session, row.ref_id, str(file_id), received_at or now, clock)
        owe(session, "poll", row.ref_id, row.filename, clock, at=now + settings.sdicoop_poll_interval)
    elif answer.detail == StatoFile.SF01:  # poll: still processing
        row.status, row.updated_at = PENDING, now
        row.next_attempt_at = now + settings.sdicoop_poll_interval
        wake(session, row, clock)
    else:  # poll: SF02 or SF03, with the SDI's outcome file
        _finish(row, DONE, None, now)
        request = session.get(ComfinRequest, row.ref_id)
        notifica = answer.value
        if request is not None and notifica is not None:
            comfin_inbound.receive_outcome(
                session, request.file_id, notifica.nome_file, notifica.file, clock, state=str(answer.detail)
            )
        elif request is not None:
            comfin.give_up(session, request.id, "AR99", f"{answer.detail} without an outcome file", clock)


def _refused(session: UnitOfWork, row: SdiTransmission, detail: str, clock: Clock) -> None:
    """A permanent refusal: the invoice ends in 2, the communication in AR06, the esito refused."""
    log.error("SDICoop %s %s refused: %s", row.kind, row.filename, detail)
    code = detail.split(":", 1)[0]
    if row.kind == "invoice":
        invoice = invoices.lock_invoice(session, row.ref_id)  # read once: safe_apply moves it
        if invoice is not None and invoice.state == InvoiceState.PRESA_IN_CARICO:
            errors = [{"code": code, "description": f"The Exchange System refused the file: {detail}"}]
            invoices.safe_apply(
                session, invoice.id, InvoiceEvent.CHECKS_FAILED, key="sdicoop", clock=clock, sdi_errors=errors
            )
    elif row.kind in ("communication", "poll"):
        comfin.give_up(session, row.ref_id, "AR06", f"The Exchange System refused the file: {detail}", clock)


def _store_exchange(
    session: UnitOfWork, row: SdiTransmission, exchange: Exchange, error: str, now: datetime
) -> None:
    """The request and the answer as they went over the wire (the evidence)."""
    name = f"sdicoop-{row.kind}-{row.id}-{row.attempts}"
    request = (
        blobs.store(session, f"{name}.request", exchange.request, None, now) if exchange.request else None
    )
    response = (
        blobs.store(session, f"{name}.response", exchange.response, None, now) if exchange.response else None
    )
    session.add(
        SdiExchange(
            transmission_id=row.id,
            direction="out",
            operation=exchange.soap_action.strip('"').rsplit("/", 1)[-1][:40] or row.kind,
            status=exchange.status,
            sdi_id=row.answer_id,
            request_blob_id=request.id if request else None,
            response_blob_id=response.id if response else None,
            error=error[:500] if error else None,
            at=now,
        )
    )


# -- the reconciler ----------------------------------------------------------------------------


def settle_stalled(clock: Clock | None = None) -> dict[str, int]:
    """Claims whose answer never came (a worker killed during the call) become UNKNOWN (a poll is
    only a question: asked again); UNKNOWN rows wait `sdicoop_unknown_resend_after`, then go again;
    a due row whose job is gone (failed, or ran before it was due) gets a job again.

    Rows are locked and skipped when another process holds them, so two overlapping runs (or a
    run and a job claiming the row) never act on a status one of them read before the other's
    change."""
    clock, settings = clock or current_clock(), get_settings()
    now = clock.now()
    lease = timedelta(seconds=settings.sdicoop_timeout_seconds) + _LEASE_MARGIN
    counts = {"unknown": 0, "again": 0, "woken": 0}

    def locked(*where: Any) -> list[SdiTransmission]:
        query = select(SdiTransmission).where(*where).with_for_update(skip_locked=True)
        return list(session.scalars(query))

    with unit_of_work() as session:
        for row in locked(SdiTransmission.status == IN_FLIGHT, SdiTransmission.claimed_at < now - lease):
            if row.kind == "poll":
                row.status, row.next_attempt_at, row.updated_at = PENDING, now, now
                wake(session, row, clock)
            else:
                _finish(row, UNKNOWN, "the call's answer never came (the worker stopped)", now)
                counts["unknown"] += 1
        resend_before = now - settings.sdicoop_unknown_resend_after
        for row in locked(SdiTransmission.status == UNKNOWN, SdiTransmission.updated_at < resend_before):
            row.status, row.next_attempt_at, row.updated_at, row.resent = PENDING, now, now, True
            wake(session, row, clock)
            counts["again"] += 1
        overdue = now - _LEASE_MARGIN
        for row in locked(SdiTransmission.status == PENDING, SdiTransmission.next_attempt_at < overdue):
            if not job_waiting(session, row):
                wake(session, row, clock, again=True)
                counts["woken"] += 1
    return counts
