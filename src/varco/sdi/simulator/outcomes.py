"""Customer outcomes (EC) reaching the simulated SDI: accepted (ES01), or refused with an SE.

An accepted outcome on a file that a varco client sent is forwarded to that sender as NE, which
moves the sent invoice to 8 Accettata / 9 Rifiutata.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from varco.core import jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.sdi import messages
from varco.sdi.channel import OutcomeReceipt
from varco.sdi.models import SimFile
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import files, scenarios, signing

# run by sdi.simulator.tasks: forward an accepted customer outcome to the sender as NE
FORWARD = jobs.Task(
    "sdi.sim.forward_esito", ("file_id", "esito", "ref", "description", "message_id_committente")
)
WINDOW = timedelta(days=15)


def receive_outcome(session: UnitOfWork, filename: str, content: bytes, clock: Clock) -> OutcomeReceipt:
    """SdIRiceviNotifica.NotificaEsito: check the EC and answer at once."""
    try:
        message = messages.parse(content)
    except messages.MessageError as exc:
        return _refuse(
            session, None, filename, None, "EN00", f"Notifica non conforme al formato: {exc}", clock
        )
    if message.type != "EC":
        return _refuse(
            session,
            None,
            filename,
            message,
            "EN00",
            f"attesa NotificaEsitoCommittente, non {message.type}",
            clock,
        )
    file = files.by_sdi_id(session, message.sdi_id, lock=True)
    now = sim_clock.sim_now(session, clock)
    if file is None or not file.facts.get("to_varco") or file.delivered_at is None:
        reason = f"IdentificativoSdI {message.sdi_id} non recapitato a questo destinatario"
    elif scenarios.resolve(session, file.filename, file.codice_destinatario).esito_outcome == "SE":
        reason = "Esito rifiutato (scenario del simulatore)"
    elif file.esito is not None:
        reason = f"Esito già ricevuto per il file {file.filename}"
    elif now > file.delivered_at + WINDOW:
        reason = "Esito ricevuto oltre i 15 giorni dalla consegna"
    else:
        file.esito = message.esito
        if file.next_step == "deadline":  # answered in time: no DT (a file sent over SOAP)
            file.next_step, file.due_at, file.finished_at = None, None, now
        if file.origin in ("varco", "soap"):  # the sender is an intermediary's client: tell it (NE)
            jobs.enqueue(
                session,
                FORWARD,
                key=f"sdi.sim.ne:{file.id}",
                clock=clock,
                file_id=file.id,
                esito=message.esito,
                ref=_ref_args(message.ref),
                description=message.description,
                message_id_committente=message.message_id,
            )
        return OutcomeReceipt(accepted=True)
    return _refuse(session, file, filename, message, "EN01", reason, clock)


def _refuse(
    session: UnitOfWork,
    file: SimFile | None,
    filename: str,
    message: messages.Message | None,
    scarto: str,
    reason: str,
    clock: Clock,
) -> OutcomeReceipt:
    sid = message.sdi_id if message and message.sdi_id.isdigit() else "0"
    progressive = files.next_progressive(file, "SE") if file is not None else 1
    message_id = files.message_id(file, "SE", progressive) if file is not None else f"SE{sid}"[-14:]
    element = messages.scarto_esito(
        sid,
        message.ref if message else None,
        scarto,
        message_id,
        message.message_id if message else None,
        reason,
    )
    signed = messages.serialize(signing.sign(session, element, clock))
    # The SE is named after the invoice file; an EC that cannot be read is named after itself.
    invoice_name = file.filename if file is not None else filename.split("_EC_")[0] + ".xml"
    return OutcomeReceipt(
        accepted=False,
        scarto_filename=messages.message_name(invoice_name, "SE", progressive),
        scarto_xml=signed,
    )


def _ref_args(ref: messages.InvoiceRef | None) -> dict[str, Any] | None:
    return None if ref is None else {"numero": ref.numero, "anno": ref.anno, "posizione": ref.posizione}


def forward(session: UnitOfWork, args: dict[str, Any], clock: Clock) -> None:
    """Forward an accepted customer outcome to the sender (a varco client) as NE."""
    file = session.get(SimFile, int(args["file_id"]), with_for_update=True, populate_existing=True)
    if file is None or file.origin not in ("varco", "soap"):
        return
    sid = files.sdi_id(file)
    ref = messages.InvoiceRef(**args["ref"]) if args.get("ref") else None
    files.notify_sender(
        session,
        file,
        "NE",
        lambda mid: messages.notifica_esito(
            sid,
            file.filename,
            args["esito"],
            ref,
            args.get("description"),
            args.get("message_id_committente"),
            mid,
        ),
        clock,
    )
