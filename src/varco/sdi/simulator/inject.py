"""Invoices from simulated outside senders, addressed to varco: `varco sdi inject FILE`.

The simulated SDI checks the file as it checks any other (a refused file never reaches varco:
the NS would go to the outside sender), assigns an IdentificativoSdI and delivers it with its MT.
Whatever its 1.1.4, an injected file is treated as addressed to varco's recipient code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.sdi import inbound, messages, received
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import files
from varco.settings import get_settings

# SDI file names: country, sender's identifier, progressive (00001 "Nome file non valido").
FILENAME = re.compile(r"[A-Z]{2}[A-Za-z0-9]{2,28}_[A-Za-z0-9]{1,5}\.(xml|xml\.p7m)", re.IGNORECASE)


@dataclass
class Injected:
    sdi_id: str | None
    filename: str
    errors: list[dict[str, str]] = field(default_factory=list)  # what the NS to the sender lists
    delivery: received.Delivery | None = None


def inject(session: UnitOfWork, content: bytes, clock: Clock, filename: str | None = None) -> Injected:
    """Receive a file from an outside sender and deliver it to varco (or refuse it)."""
    at = sim_clock.sim_now(session, clock)
    report = files.run_checks(session, content, at)
    summary = report.summary
    if filename is None and summary is not None:
        filename = f"{summary.transmitter_country}{summary.transmitter_code}_{summary.progressivo_invio}.xml"
    if not filename or not FILENAME.fullmatch(filename):
        error = {"code": "00001", "description": f"Nome file non valido: {filename or '(none)'}"}
        return Injected(None, filename or "", [error])
    if files.by_filename(session, filename, "external") is not None:
        return Injected(
            None, filename, [{"code": "00002", "description": f"Nome file duplicato: {filename}"}]
        )
    file = files.new_file(
        session,
        origin="external",
        filename=filename,
        content=content,
        clock=clock,
        codice_destinatario=summary.codice_destinatario if summary else None,
        format_=report.format,
    )
    file.facts = files.facts(report)
    file.errors = files.sdi_errors(report) if not report.accepted else []
    file.finished_at = at
    sdi_id = files.sdi_id(file)
    if file.errors:
        file.outcome = "NS"
        return Injected(sdi_id, filename, file.errors)
    ours = get_settings().recipient_code
    n = files.next_progressive(file, "MT")
    metadata = messages.metadati(
        sdi_id, filename, ours, file.format or "FPR12", files.message_id(file, "MT", n)
    )
    delivery = inbound.receive_invoice(session, filename, content, messages.serialize(metadata), clock)
    file.outcome, file.delivered_at = "RC", at
    file.facts = {**file.facts, "to_varco": True}
    file.delivered_invoice_id = delivery.invoice.id if delivery.invoice else None
    return Injected(sdi_id, filename, [], delivery)
