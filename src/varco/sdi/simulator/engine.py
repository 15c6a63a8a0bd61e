"""The simulated SDI's processing of a file, one step at a time, in simulated time.

check → deliver (NS, MC, AT, or RC and, for a private recipient that is a varco client, the
received copy) → for a PA: esito (NE EC01/EC02) or deadline (DT after 15 days). Each step is due at
`due_at` (simulated time); a job runs every due step of a file under a row lock, and everything
it changes commits with the job row, so a re-run after a crash or a duplicate wake-up repeats
nothing. Deadlines are picked up by `tick` (a reconciler, and `varco sdi advance`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from hashlib import sha256

from sqlalchemy import select

from varco.core import blobs, jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice
from varco.sdi import inbound, messages, received
from varco.sdi.models import SimFile
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import files, network, scenarios
from varco.settings import get_settings

log = logging.getLogger("varco.sdi.simulator")

# run by sdi.simulator.tasks
PROCESS = jobs.Task("sdi.sim.process", ("file_id",))  # the due steps of one simulated file
TICK = jobs.Task("sdi.sim.tick")  # queue the steps that became due
PA_WINDOW = timedelta(days=15)  # NE within 15 days of RC, else DT
# The scenario outcome as it applies to each kind of recipient (docs/sdi.md).
_PRIVATE = {"NE-EC01": "RC", "NE-EC02": "RC", "DT": "RC", "AT": "MC"}
_PA = {"RC": "NE-EC01"}


def submit(session: UnitOfWork, invoice: Invoice, content: bytes, clock: Clock) -> SimFile | None:
    """Take in a file sent by varco and schedule its check; None if the invoice has a file already."""
    digest = sha256(content).hexdigest()
    same_bytes = digest == invoice.content_sha256
    blob_id = invoice.blob_id if same_bytes else _store(session, invoice.filename, content, clock)
    file = files.file_of_invoice(
        session,
        invoice.id,
        invoice.filename,
        content,
        clock,
        blob_id=blob_id,
        codice_destinatario=invoice.codice_destinatario,
        format_=invoice.format,
        sha256=digest,
    )
    if file is None:
        return None
    # A worker's service stage runs the check (and an immediate outcome) in its own transaction.
    jobs.follow_on(session, PROCESS, key=_job_key(file), clock=clock, file_id=file.id)
    return file


def _store(session: UnitOfWork, name: str, content: bytes, clock: Clock) -> int:
    return blobs.store(session, name, content, None, clock.now()).id


def schedule(session: UnitOfWork, file: SimFile, clock: Clock) -> None:
    """A job for the file's next step (sent after commit); the key makes it once per step."""
    jobs.enqueue(session, PROCESS, key=_job_key(file), clock=clock, file_id=file.id)


def _job_key(file: SimFile) -> str:
    assert file.next_step is not None and file.due_at is not None
    return f"sdi.sim:{file.id}:{file.next_step}:{file.due_at.isoformat()}"


def process(session: UnitOfWork, file_id: int, clock: Clock) -> int:
    """Run every step of the file that is due in simulated time; returns how many ran."""
    file = files.get_for_update(session, file_id)
    if file is None:
        return 0
    now = sim_clock.sim_now(session, clock)
    ran = 0
    # The file's own changes need no flush before each query of a step: one flush fewer per query.
    with session.no_autoflush:
        while file.next_step is not None and file.due_at is not None and file.due_at <= now:
            before = (file.next_step, file.due_at)
            _STEPS[file.next_step](session, file, file.due_at, clock)
            if (file.next_step, file.due_at) == before:
                raise RuntimeError(f"simulated file {file.id}: step {before[0]} made no progress")
            ran += 1
    return ran


def _then(file: SimFile, step: str, at: datetime) -> None:
    file.next_step, file.due_at = step, at


def _finish(file: SimFile, at: datetime) -> None:
    file.next_step, file.due_at, file.finished_at = None, None, at


def _check(session: UnitOfWork, file: SimFile, at: datetime, clock: Clock) -> None:
    report = files.run_checks(session, files.content_of(session, file), at)
    file.format = report.format or file.format
    file.facts = files.facts(report)
    if file.codice_destinatario is None and report.summary is not None:  # a file sent over SOAP
        file.codice_destinatario = report.summary.codice_destinatario
    scenario = scenarios.resolve(session, file.filename, file.codice_destinatario)
    errors = files.sdi_errors(report)
    register = files.Register(session, file)
    errors += files.sdi_control_errors(session, file, report, bool(errors), at, register)
    if errors:  # refused: the invoices its controls entered in the register are not taken
        register.take_back()
    if not errors and scenario.outcome == "NS":
        errors = [
            {
                "code": "00311",
                "description": "1.1.4 <CodiceDestinatario> non valido (scenario del simulatore)",
            }
        ]
    file.errors = errors
    pa = file.format == "FPA12"
    outcome = "NS" if errors else scenario.outcome
    file.outcome = outcome if outcome == "NS" else (_PA if pa else _PRIVATE).get(outcome, outcome)
    file.delay_seconds = int(scenario.delay.total_seconds())
    _then(file, "deliver", at + scenario.delay)


def _deliver(session: UnitOfWork, file: SimFile, at: datetime, clock: Clock) -> None:
    sid = files.sdi_id(file)
    match file.outcome:
        case "NS":
            files.notify_sender(
                session,
                file,
                "NS",
                lambda mid: messages.notifica_scarto(sid, file.filename, file.received_at, file.errors, mid),
                clock,
            )
        case "MC":
            text = "Non è stato possibile recapitare la fattura al destinatario (scenario del simulatore)"
            files.notify_sender(
                session,
                file,
                "MC",
                lambda mid: messages.mancata_consegna(sid, file.filename, file.received_at, text, mid),
                clock,
            )
        case "AT":
            to = files.recipient(file)
            files.notify_sender(
                session,
                file,
                "AT",
                lambda mid: messages.attestazione(sid, file.filename, file.received_at, to, mid, file.sha256),
                clock,
            )
        case _:
            _deliver_rc(session, file, at, clock)
            return
    _finish(file, at)


def _deliver_rc(session: UnitOfWork, file: SimFile, at: datetime, clock: Clock) -> None:
    if file.origin == "soap" and network.required().hand_over(session, file, clock):
        file.next_step, file.due_at = "handover", None  # a job delivers it, then `handed_over`
        return
    sid = files.sdi_id(file)
    ours = get_settings().recipient_code
    internal = file.origin == "varco" and file.format != "FPA12" and _addressed_to_varco(session, file, ours)
    if internal:
        delivery = _deliver_to_varco(session, file, ours, clock)
        file.delivered_invoice_id = delivery.invoice.id if delivery.invoice else None
    to = files.recipient(file, ours if internal else None)
    files.notify_sender(
        session,
        file,
        "RC",
        lambda mid: messages.ricevuta_consegna(
            sid, file.filename, file.received_at, at, to, mid, dual_role=internal
        ),
        clock,
    )
    file.delivered_at = at
    if file.format != "FPA12":
        _finish(file, at)
    elif file.outcome == "DT" or timedelta(seconds=file.delay_seconds) >= PA_WINDOW:
        _then(file, "deadline", at + PA_WINDOW)
    else:
        _then(file, "esito", at + timedelta(seconds=file.delay_seconds))


def handed_over(session: UnitOfWork, file: SimFile, at: datetime, clock: Clock) -> None:
    """The recipient's intermediary took the file (RiceviFatture answered ER01): RC to the sender.
    A PA's outcome comes from its intermediary (SdIRiceviNotifica), or DT after 15 days."""
    sid = files.sdi_id(file)
    to = files.recipient(file)
    file.facts = {**file.facts, "to_varco": True}  # delivered to a recipient that may answer (EC)
    files.notify_sender(
        session,
        file,
        "RC",
        lambda mid: messages.ricevuta_consegna(sid, file.filename, file.received_at, at, to, mid),
        clock,
    )
    file.delivered_at = at
    if file.format == "FPA12":
        _then(file, "deadline", at + PA_WINDOW)
    else:
        _finish(file, at)


def _addressed_to_varco(session: UnitOfWork, file: SimFile, ours: str) -> bool:
    """Our recipient code, or a client that is a varco account (its registered channel)."""
    if file.codice_destinatario == ours:
        return True
    client = files.client_party(file)
    return client is not None and received.has_recipient(session, client)


def _deliver_to_varco(session: UnitOfWork, file: SimFile, ours: str, clock: Clock) -> received.Delivery:
    n = files.next_progressive(file, "MT")
    metadata = messages.metadati(
        files.sdi_id(file), file.filename, ours, file.format or "FPR12", files.message_id(file, "MT", n)
    )
    file.facts = {**file.facts, "to_varco": True}
    content = files.content_of(session, file)
    return inbound.receive_invoice(session, file.filename, content, messages.serialize(metadata), clock)


def _esito(session: UnitOfWork, file: SimFile, at: datetime, clock: Clock) -> None:
    """The PA answers: one NE per invoice of a batch, one NE for a single invoice."""
    sid = files.sdi_id(file)
    esito = "EC01" if file.outcome == "NE-EC01" else "EC02"
    text = None if esito == "EC01" else "Fattura rifiutata dal committente (scenario del simulatore)"
    bodies = file.facts.get("bodies", [])
    refs: list[messages.InvoiceRef | None] = [None]
    if len(bodies) > 1:
        refs = [messages.InvoiceRef(b["numero"], b["anno"], i) for i, b in enumerate(bodies, start=1)]
    for ref in refs:
        files.notify_sender(
            session,
            file,
            "NE",
            lambda mid, ref=ref: messages.notifica_esito(sid, file.filename, esito, ref, text, None, mid),
            clock,
        )
    file.esito = esito
    _finish(file, at)


def _deadline(session: UnitOfWork, file: SimFile, at: datetime, clock: Clock) -> None:
    sid = files.sdi_id(file)
    text = "Decorsi 15 giorni dalla consegna senza esito del committente"
    files.notify_sender(
        session, file, "DT", lambda mid: messages.decorrenza_termini(sid, file.filename, text, mid), clock
    )
    _finish(file, at)


_STEPS: dict[str, Callable[[UnitOfWork, SimFile, datetime, Clock], None]] = {
    "check": _check,
    "deliver": _deliver,
    "esito": _esito,
    "deadline": _deadline,
}


# -- deadlines -------------------------------------------------------------------------------


def due_files(session: UnitOfWork, clock: Clock, limit: int = 1000) -> list[int]:
    now = sim_clock.sim_now(session, clock)
    query = select(SimFile.id).where(SimFile.next_step.is_not(None), SimFile.due_at <= now)
    return list(session.scalars(query.order_by(SimFile.due_at).limit(limit)))


def schedule_due(session: UnitOfWork, clock: Clock) -> None:
    """Enqueue a job for every simulated file with a due step."""
    for file_id in due_files(session, clock):
        file = session.get(SimFile, file_id)
        if file is not None:
            schedule(session, file, clock)


def tick(clock: Clock | None = None) -> int:
    """Every minute: enqueue the steps that became due (delays, DT deadlines)."""
    clock = clock or current_clock()
    with unit_of_work() as session:
        ids = due_files(session, clock)
        for file_id in ids:
            file = session.get(SimFile, file_id)
            if file is not None:
                schedule(session, file, clock)
    return len(ids)


def run_due(clock: Clock) -> int:
    """Run every due step now, in this process, one file per transaction (CLI `advance`)."""
    ran = 0
    while True:
        with unit_of_work() as session:
            ids = due_files(session, clock, limit=200)
        progress = 0
        for file_id in ids:
            with unit_of_work() as session:
                progress += process(session, file_id, clock)
        ran += progress
        if not progress:  # nothing due any more (another worker may have run them)
            return ran
