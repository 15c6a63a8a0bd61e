"""What the SDICoop face sends to intermediaries, as jobs: a notification to the sender
(TrasmissioneFatture), an invoice to the recipient (RicezioneFatture.RiceviFatture, then the RC),
a DT to the recipient too.

Each job posts after its commit, holding no lock while the intermediary answers (on SQLite a
transaction holds the simulator's only write lock: a post inside one held up every `RiceviFile`
of the other intermediaries). Its transaction also queues the same delivery again, due later: a
post that succeeds cancels it; one that fails (no 2xx, a Fault, no ER01), or a process that dies
before posting, leaves it to run, as the real SDI delivers again until a message is taken. A
message is sent again whole: the intermediary must take the same message twice as once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

import requests

from varco.core import blobs, jobs
from varco.core.clock import Clock
from varco.core.db import unit_of_work
from varco.core.uow import UnitOfWork
from varco.sdi import messages
from varco.sdi.models import SimFile
from varco.sdi.sdicoop import envelope, transport
from varco.sdi.sdicoop.contracts import Service
from varco.sdi.sdicoop.outbound import build_request
from varco.sdi.sdicoop.payloads import FileSdI, FileSdIConMetadati, Request
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import engine, files, network
from varco.sdi.simulator.soap.config import Intermediary, SimConfig, transmitter_of
from varco.settings import get_settings

log = logging.getLogger("varco.sdi.simulator.soap")

NOTIFY = jobs.Task(
    "sdi.sim.soap.notify", ("intermediary", "service", "operation", "sdi_id", "name", "blob_id", "attempt")
)
HAND_OVER = jobs.Task("sdi.sim.soap.hand_over", ("file_id", "intermediary", "attempt"))
MAX_ATTEMPTS = 10

# The notification types and their operation on TrasmissioneFatture.
OPERATIONS = {
    "RC": "RicevutaConsegna",
    "NS": "NotificaScarto",
    "MC": "NotificaMancataConsegna",
    "NE": "NotificaEsito",
    "DT": "NotificaDecorrenzaTermini",
    "AT": "AttestazioneTrasmissioneFattura",
}


class Undelivered(Exception):
    """The intermediary did not take the message: the job is tried again."""


class SoapNetwork:
    """`simulator.network.Network` over SOAP with mutual TLS."""

    def __init__(self, config: SimConfig) -> None:
        self.config = config
        self._http: requests.Session | None = None

    # -- Network ---------------------------------------------------------------------------

    def notify(
        self, session: UnitOfWork, file: SimFile, type_: str, name: str, xml: bytes, clock: Clock
    ) -> None:
        sender = self.config.by_transmitter(transmitter_of(file.filename))
        if sender is None:  # taken in, so it was known then; the file changed since
            log.warning("no intermediary sends %s any more: %s not delivered", file.filename, name)
            return
        blob_id = blobs.store(session, name, xml, None, clock.now()).id
        targets = [(sender, Service.TRASMISSIONE_FATTURE)]
        recipient = self.config.by_recipient_code(file.codice_destinatario)
        if type_ == "DT" and recipient is not None and file.facts.get("to_varco"):
            targets.append((recipient, Service.RICEZIONE_FATTURE))  # the DT goes to both ends
        for target, service in targets:
            jobs.enqueue(
                session,
                NOTIFY,
                key=f"sdi.sim.soap:{file.id}:{target.name}:{service.value}:{name}",
                clock=clock,
                intermediary=target.name,
                service=service.value,
                operation=OPERATIONS[type_],
                sdi_id=files.sdi_id(file),
                name=name,
                blob_id=blob_id,
                attempt=0,
            )

    def hand_over(self, session: UnitOfWork, file: SimFile, clock: Clock) -> bool:
        recipient = self.config.by_recipient_code(file.codice_destinatario)
        if recipient is None:
            return False
        jobs.enqueue(
            session,
            HAND_OVER,
            key=f"sdi.sim.soap.hand_over:{file.id}",
            clock=clock,
            file_id=file.id,
            intermediary=recipient.name,
            attempt=0,
        )
        return True

    # -- calls -----------------------------------------------------------------------------

    def http(self) -> requests.Session:
        if self._http is None:
            client = self.config.client
            self._http = transport.make_session(
                (str(client.certificate), str(client.key)), str(client.ca_bundle)
            )
        return self._http

    def post(self, target: Intermediary, service: Service, operation: str, payload: Request) -> bytes:
        """POST the request; the answer's body, or Undelivered."""
        url = (
            target.trasmissione_fatture_url
            if service == Service.TRASMISSIONE_FATTURE
            else target.ricezione_fatture_url
        )
        message = build_request(service, operation, payload, as_mtom=target.mtom)
        try:
            answer = self.http().post(
                url, data=message.body, headers=message.headers(), timeout=self.config.timeout_seconds
            )
        except requests.RequestException as exc:
            raise Undelivered(f"{operation} to {target.name}: {type(exc).__name__}: {exc}") from None
        if not 200 <= answer.status_code < 300:
            raise Undelivered(f"{operation} to {target.name}: HTTP {answer.status_code}: {answer.text[:200]}")
        log.info(
            "%s.%s delivered to %s (%s)", service, operation, target.name, getattr(payload, "nome_file", "")
        )
        return answer.content if answer.status_code == 200 else b""

    def target(self, name: str) -> Intermediary:
        target = self.config.by_name(name)
        if target is None:
            raise Undelivered(f"no intermediary {name!r} in the configuration any more")
        return target


def _current() -> SoapNetwork:
    installed = network.current()
    if not isinstance(installed, SoapNetwork):
        raise RuntimeError("the SDICoop face is not configured in this process")
    return installed


def notify(session: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """A message to an intermediary (TrasmissioneFatture, or RicezioneFatture for a DT)."""
    soap = _current()
    content = blobs.content(session, int(args["blob_id"]))
    payload = FileSdI(int(args["sdi_id"]), args["name"], content)
    target, service = soap.target(args["intermediary"]), Service(args["service"])
    again = _again(
        session, NOTIFY, args, f"{args['sdi_id']}:{target.name}:{service.value}:{args['name']}", clock
    )
    session.on_commit(partial(_post, soap, target, service, args["operation"], payload, again, None))


def hand_over(session: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """RiceviFatture to the recipient's intermediary; on ER01, the RC to the sender."""
    soap = _current()
    file = files.get_for_update(session, int(args["file_id"]))
    if file is None or file.next_step != "handover":
        return  # delivered before (a re-sent job)
    sid = files.sdi_id(file)
    content = files.content_of(session, file)
    n = files.next_progressive(file, "MT")
    metadata = messages.metadati(
        sid,
        file.filename,
        file.codice_destinatario or "",
        file.format or "FPR12",
        files.message_id(file, "MT", n),
    )
    payload = FileSdIConMetadati(
        int(sid),
        file.filename,
        content,
        messages.message_name(file.filename, "MT", n),
        messages.serialize(metadata),
    )
    target = soap.target(args["intermediary"])
    again = _again(session, HAND_OVER, args, f"{file.id}", clock)
    taken = partial(_handed_over, file.id, file.filename, clock)
    session.on_commit(
        partial(_post, soap, target, Service.RICEZIONE_FATTURE, "RiceviFatture", payload, again, taken)
    )


def _again(session: UnitOfWork, task: jobs.Task, args: dict[str, Any], what: str, clock: Clock) -> str | None:
    """The same delivery queued again in this transaction, due after the post would have ended;
    its key, for the post to cancel it. None past the last attempt."""
    attempt = int(args.get("attempt", 0)) + 1
    if attempt >= MAX_ATTEMPTS:
        log.error("%s %s: last attempt", task.name, what)
        return None
    key = f"{task.name}:{what}:again:{attempt}"
    delay = get_settings().stale_job_after * attempt
    jobs.enqueue(session, task, key=key, delay=delay, clock=clock, **{**args, "attempt": attempt})
    return key


def _post(
    soap: SoapNetwork,
    target: Intermediary,
    service: Service,
    operation: str,
    payload: Request,
    again: str | None,
    taken: Callable[[UnitOfWork, bytes], None] | None,
) -> None:
    """After the job's commit (an after-commit hook: it never raises). Taken: what the answer
    causes (`taken`) and the delivery queued again cancelled, in one transaction."""
    try:
        body = soap.post(target, service, operation, payload)
        with unit_of_work() as session:
            if taken is not None:
                taken(session, body)
            if again is not None:
                jobs.cancel(session, again)
    except Exception as exc:  # noqa: BLE001 - the delivery queued again will try it again
        log.warning("%s.%s to %s not taken (%s): delivered again later", service, operation, target.name, exc)


def _handed_over(file_id: int, filename: str, clock: Clock, session: UnitOfWork, body: bytes) -> None:
    if _esito(body) != "ER01":
        raise Undelivered(f"RiceviFatture of {filename}: no ER01 in the answer")
    file = files.get_for_update(session, file_id)
    if file is not None and file.next_step == "handover":
        engine.handed_over(session, file, sim_clock.sim_now(session, clock), clock)


def _esito(body: bytes) -> str | None:
    try:
        message = envelope.read(envelope.XML_CONTENT_TYPE, body)
    except Exception:  # noqa: BLE001 - any unreadable answer is "not taken"
        return None
    found = message.payload.find("Esito")
    return (found.text or "").strip() if found is not None else None


def register(registry: jobs.Registry) -> None:
    registry.add(NOTIFY, notify)
    registry.add(HAND_OVER, hand_over)
