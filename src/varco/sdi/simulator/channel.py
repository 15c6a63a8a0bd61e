"""The simulator as an `SdiChannel`: files and outcomes go to the simulated SDI in this database."""

from __future__ import annotations

from sqlalchemy import bindparam, select

from varco.core import metrics
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.invoices.models import Invoice
from varco.sdi.channel import CommunicationReceipt, OutcomeReceipt
from varco.sdi.models import EsitoCommittente, SimFile
from varco.sdi.simulator import comfin, engine, files, outcomes

_FILE_OF_INVOICE = select(SimFile).where(SimFile.invoice_id == bindparam("invoice_id"))  # built once


class SimulatorChannel:
    def send_invoice(self, session: UnitOfWork, invoice: Invoice, content: bytes, clock: Clock) -> str:
        """SdIRiceviFile: the IdentificativoSdI at once; checks and outcomes follow from a job."""
        if invoice.sdi_id:
            return invoice.sdi_id
        file = engine.submit(session, invoice, content, clock)
        if file is None:  # taken before (files.file_of_invoice): the SDI answers with that file's id
            file = session.scalar(_FILE_OF_INVOICE, {"invoice_id": invoice.id})
        else:
            metrics.count_on_commit(session, metrics.SDI_CALLS, "simulator", "RiceviFile", "accepted")
        invoice.sdi_id = files.sdi_id(file)
        invoice.sdi_received_at = invoice.sdi_received_at or file.received_at
        return invoice.sdi_id

    def send_outcome(
        self, session: UnitOfWork, esito: EsitoCommittente, content: bytes, clock: Clock
    ) -> OutcomeReceipt:
        """SdIRiceviNotifica.NotificaEsito: accepted, or refused with a ScartoEsitoCommittente."""
        receipt = outcomes.receive_outcome(session, esito.esito_filename, content, clock)
        result = "accepted" if receipt.accepted else "refused"
        metrics.count_on_commit(session, metrics.SDI_CALLS, "simulator", "NotificaEsito", result)
        return receipt

    def send_communication(
        self, session: UnitOfWork, request_pk: int, filename: str, kind: str, content: bytes, clock: Clock
    ) -> CommunicationReceipt:
        """SdITrasmissioneFile: an IDFile at once; the esito follows from a job (sdi/simulator/comfin.py)."""
        receipt = comfin.submit(session, filename, kind, content, clock)
        metrics.count_on_commit(session, metrics.SDI_CALLS, "simulator", "Trasmetti", "accepted")
        return receipt
