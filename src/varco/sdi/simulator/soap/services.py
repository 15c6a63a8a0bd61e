"""The SDI's three services as the SDICoop face answers them: SdIRiceviFile (an invoice file),
SdIRiceviNotifica (a customer outcome, EC), SdITrasmissioneFile (LI/DF communications, and the
question of their outcome). Each runs in one transaction of the simulator's database."""

from __future__ import annotations

from collections.abc import Callable

from lxml import etree

from varco.core import blobs
from varco.core.clock import Clock
from varco.core.numbers import MAX_ID
from varco.core.uow import UnitOfWork
from varco.sdi import messages
from varco.sdi.sdicoop import server
from varco.sdi.sdicoop.payloads import (
    ErroreInvio,
    EsitoNotifica,
    FileSdI,
    FileSdIBase,
    FileTrasmissione,
    RichiestaEsito,
    RispostaEsito,
    RispostaNotificaEsito,
    RispostaRiceviFile,
    RispostaTrasmetti,
    StatoFile,
    TipoFile,
)
from varco.sdi.sdicoop.schemas import NotWellFormed, parse_untrusted
from varco.sdi.simulator import comfin, engine, files, outcomes
from varco.sdi.simulator.soap.config import SimConfig, transmitter_of

Handler = Callable[[UnitOfWork, SimConfig, object, Clock], server.SoapReply]
NO_ID = 1  # the XSDs want a positive identifier and a time even beside an Errore: they mean nothing then


def _refused_file(code: ErroreInvio, clock: Clock) -> server.SoapReply:
    return server.ricevi_file_reply(RispostaRiceviFile(NO_ID, clock.now(), code))


def _refused_communication(code: ErroreInvio, clock: Clock) -> server.SoapReply:
    return server.trasmetti_reply(RispostaTrasmetti(NO_ID, clock.now(), code))


def ricevi_file(session: UnitOfWork, config: SimConfig, payload: object, clock: Clock) -> server.SoapReply:
    """A new IdentificativoSdI for every file taken (the same name twice is refused later, NS
    00002, as the real SDI does); the checks and the outcome follow from jobs."""
    assert isinstance(payload, FileSdIBase)
    if not payload.file:
        return _refused_file(ErroreInvio.EI01, clock)
    if config.by_transmitter(transmitter_of(payload.nome_file)) is None:
        # The notifications would have nowhere to go: not an accredited sender of this name.
        return _refused_file(ErroreInvio.EI03, clock)
    blob = blobs.store(session, payload.nome_file, payload.file, None, clock.now())
    file = files.new_file(
        session,
        origin="soap",
        filename=payload.nome_file,
        content=payload.file,
        clock=clock,
        blob_id=blob.id,
        next_step="check",
    )
    engine.schedule(session, file, clock)
    return server.ricevi_file_reply(RispostaRiceviFile(int(files.sdi_id(file)), file.received_at))


def notifica_esito(session: UnitOfWork, config: SimConfig, payload: object, clock: Clock) -> server.SoapReply:
    """ES01, or ES00 with the ScartoEsitoCommittente (docs/sdi.md, simulator/outcomes.py)."""
    assert isinstance(payload, FileSdI)
    unreadable = _unreadable(payload.file)
    if unreadable:
        return server.client_fault(f"NotificaEsito: {payload.nome_file} cannot be read: {unreadable}")
    receipt = outcomes.receive_outcome(session, payload.nome_file, payload.file, clock)
    if receipt.accepted:
        return server.notifica_esito_reply(RispostaNotificaEsito(EsitoNotifica.ES01))
    assert receipt.scarto_filename is not None and receipt.scarto_xml is not None
    scarto = FileSdIBase(receipt.scarto_filename, receipt.scarto_xml)
    return server.notifica_esito_reply(RispostaNotificaEsito(EsitoNotifica.ES00, scarto))


def _unreadable(xml: bytes) -> str | None:
    """Why an EC cannot even be read as one, before receive_outcome reads it: a DTD or a bomb, or
    values the XSD allows and Python cannot hold (year 10000, an AnnoFattura of 5,000 digits).
    What merely is not a valid EC is answered there, ES00 with the SE."""
    try:
        parse_untrusted(xml)
        messages.parse(xml)
    except (NotWellFormed, messages.MessageError):
        return None  # EN00, from receive_outcome
    except (ValueError, etree.LxmlError) as exc:  # InvalidXml too: a DTD, a bomb
        return str(exc)[:300]
    return None


def trasmetti(session: UnitOfWork, config: SimConfig, payload: object, clock: Clock) -> server.SoapReply:
    """An LI/DF file: its IDFile at once; the check runs from a job, the outcome is asked for."""
    assert isinstance(payload, FileTrasmissione)
    if not payload.file:
        return _refused_communication(ErroreInvio.EI01, clock)
    if payload.tipo_file not in (TipoFile.LI, TipoFile.DF):  # FL archives are not simulated
        return _refused_communication(ErroreInvio.EI04, clock)
    receipt = comfin.submit(session, payload.nome_file, payload.tipo_file, payload.file, clock)
    return server.trasmetti_reply(RispostaTrasmetti(int(receipt.file_id), receipt.received_at))


def esito(session: UnitOfWork, config: SimConfig, payload: object, clock: Clock) -> server.SoapReply:
    """SF01 while the file is checked, SF02 with the signed EsitoFile, SF03 for an unknown IDFile."""
    assert isinstance(payload, RichiestaEsito)
    # The XSD allows 15 digits; an id column holds 2**31 - 1 (PostgreSQL refuses a larger key).
    file = session.get(comfin.SimCommunication, payload.id_file) if 0 < payload.id_file <= MAX_ID else None
    if file is None:
        return server.esito_reply(RispostaEsito(StatoFile.SF03))
    if file.esito is None:
        return server.esito_reply(RispostaEsito(StatoFile.SF01))
    notifica = FileSdIBase(file.esito_filename or "", comfin.esito_xml(session, file, clock))
    return server.esito_reply(RispostaEsito(StatoFile.SF02, notifica))


HANDLERS: dict[str, Handler] = {
    "RiceviFile": ricevi_file,
    "NotificaEsito": notifica_esito,
    "Trasmetti": trasmetti,
    "Esito": esito,
}
