"""The simulated SDI for financial communications (LI, DF): take the file, check it, answer an esito.

The esito is an `EsitoFile` (DatiFatturaMessaggi v2.0, signed like every SDI message): ES01 file
validated, ES02 validated with reports, ES03 rejected. The simulator re-checks what the SDI can:
the XSD of every file and the check digits of tax codes and VAT numbers; a "comfin" scenario rule
(docs/comfin.md) forces ES02 or ES03. The esito goes back to varco through `comfin.service`.
"""

from __future__ import annotations

import io
import logging
import zipfile
from datetime import datetime

from lxml import etree
from sqlalchemy import JSON, ForeignKey, Integer, String, or_, select
from sqlalchemy.orm import Mapped, mapped_column
from stdnum.it import codicefiscale, iva

from varco.comfin import inbound as comfin_inbound  # varco's side of the channel
from varco.comfin import xsd
from varco.core import blobs, jobs
from varco.core.clock import Clock
from varco.core.db import Base, UTCDateTime
from varco.core.uow import UnitOfWork
from varco.fatturapa.envelope import open_envelope
from varco.fatturapa.errors import FatturaPAError
from varco.fatturapa.parsing import parse_xml
from varco.sdi.channel import CommunicationReceipt
from varco.sdi.messages import sdi_datetime
from varco.sdi.models import SimScenario
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import network, signing

log = logging.getLogger("varco.sdi.simulator")
PROCESS = jobs.Task("sdi.sim.comfin", ("file_id",))  # run by sdi.simulator.tasks
NS = xsd.NS_ESITO


class SimCommunication(Base):
    """A communication file as the simulated SDI received it; its id is the IDFile."""

    __tablename__ = "sdi_sim_communications"

    id: Mapped[int] = mapped_column(primary_key=True)
    filename: Mapped[str] = mapped_column(String(64), unique=True)
    kind: Mapped[str] = mapped_column(String(2))
    blob_id: Mapped[int] = mapped_column(ForeignKey("blobs.id"))
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)  # simulated DataOraRicezione
    esito: Mapped[str | None] = mapped_column(String(4))
    errors: Mapped[list[dict[str, str]]] = mapped_column(JSON, default=list)
    esito_filename: Mapped[str | None] = mapped_column(String(64))
    answered_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    attempts: Mapped[int] = mapped_column(Integer, default=0)


def submit(
    session: UnitOfWork, filename: str, kind: str, content: bytes, clock: Clock
) -> CommunicationReceipt:
    """Take a file (the same name twice is the same file) and schedule its check."""
    file = session.scalar(select(SimCommunication).where(SimCommunication.filename == filename))
    if file is None:
        blob = blobs.store(
            session, filename, content, None, clock.now()
        )  # the SDI's copy: no account's space
        file = SimCommunication(
            filename=filename, kind=kind, blob_id=blob.id, received_at=sim_clock.sim_now(session, clock)
        )
        session.add(file)
        session.flush()
        jobs.enqueue(session, PROCESS, key=f"sdi.sim.comfin:{file.id}", clock=clock, file_id=file.id)
    return CommunicationReceipt(str(file.id), file.received_at)


def process(session: UnitOfWork, file_id: int, clock: Clock) -> str | None:
    """Decide the esito (once), build and sign it, hand it to varco; returns the esito code."""
    file = session.get(SimCommunication, file_id, with_for_update=True, populate_existing=True)
    if file is None:
        return None
    if file.esito is None:
        content = _content(session, file)
        errors = check(content, file.kind)
        forced = resolve(session, file.filename, file.kind)
        if errors:
            file.esito, file.errors = "ES03", errors
        elif forced == "ES03":
            file.esito, file.errors = (
                "ES03",
                [{"Codice": "00300", "Descrizione": "Scarto simulato (scenario)"}],
            )
        elif forced == "ES02":
            file.esito = "ES02"
            file.errors = [{"Codice": "00200", "Descrizione": "Segnalazione simulata (scenario)"}]
        else:
            file.esito, file.errors = "ES01", []
        file.esito_filename = file.filename.rsplit(".", 1)[0] + "_ES_001.xml"
        file.answered_at = sim_clock.sim_now(session, clock)
    if network.current() is not None:  # the SDICoop face: the intermediary asks (Esito)
        return file.esito
    xml = esito_xml(session, file, clock)
    comfin_inbound.receive_outcome(session, str(file.id), file.esito_filename or "", xml, clock)
    return file.esito


def _content(session: UnitOfWork, file: SimCommunication) -> bytes:
    blob = session.get(blobs.Blob, file.blob_id)
    assert blob is not None
    return blob.content


def resolve(session: UnitOfWork, filename: str, kind: str) -> str | None:
    """The forced esito: a comfin rule for this file name, else for the type (LI/DF), else for all."""
    rows = session.scalars(
        select(SimScenario).where(
            SimScenario.kind == "comfin", or_(SimScenario.value.in_((filename, kind, "")))
        )
    ).all()
    rank = {filename: 0, kind: 1, "": 2}
    best = sorted((r for r in rows if r.outcome), key=lambda r: rank[r.value])
    return best[0].outcome if best else None


def check(content: bytes, kind: str) -> list[dict[str, str]]:
    """What the simulated SDI finds wrong (ListaErrori); empty when the files pass."""
    errors: list[dict[str, str]] = []
    for name, data in _entries(content):
        try:
            root = parse_xml(open_envelope(data).content)
        except FatturaPAError as exc:
            errors.append(_error("00001", f"{name}: {exc.finding.message}"))
            continue
        found = xsd.kind_of(root)
        if found != kind:
            errors.append(_error("00002", f"{name}: not a {kind} communication"))
            continue
        for problem in xsd.errors(root, kind)[:5]:
            errors.append(_error("00001", f"{name}: {problem}"))
        errors.extend(_error("00003", f"{name}: {p}") for p in _codes(root))
    return errors


def _entries(content: bytes) -> list[tuple[str, bytes]]:
    if content.startswith(b"PK\x03\x04"):
        with zipfile.ZipFile(io.BytesIO(content)) as archive:
            return [(i.filename, archive.read(i)) for i in archive.infolist() if not i.is_dir()]
    return [("file", content)]


def _codes(root: etree._Element) -> list[str]:
    """Tax codes and VAT numbers with a wrong check digit (the register is not simulated)."""
    problems = []
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        local = etree.QName(element).localname
        value = (element.text or "").strip()
        if local in ("CodiceFiscale", "CFDichiarante", "CFIntermediario") and value:
            if not (codicefiscale.is_valid(value) or iva.is_valid(value)):
                problems.append(f"{local} {value} is not a valid tax code")
        elif (
            local in ("PartitaIVA", "IdCodice")
            and value.isdigit()
            and len(value) == 11
            and not iva.is_valid(value)
        ):
            problems.append(f"{local} {value} is not a valid VAT number")
    return problems


def _error(code: str, text: str) -> dict[str, str]:
    return {"Codice": code, "Descrizione": text[:255]}


def esito_xml(session: UnitOfWork, file: SimCommunication, clock: Clock) -> bytes:
    """The signed EsitoFile (DatiFatturaMessaggi v2.0)."""
    root = etree.Element(f"{{{NS}}}EsitoFile", nsmap={"ns": NS}, versione="2.0")

    def add(parent: etree._Element, tag: str, text: str) -> etree._Element:
        child = etree.SubElement(parent, tag)  # unqualified, as the schema's local elements are
        child.text = text
        return child

    add(root, "TipoFile", file.kind)
    add(root, "IDFile", str(file.id))
    add(root, "NomeFile", file.filename)
    add(root, "DataOraRicezione", sdi_datetime(file.received_at))
    add(root, "Esito", file.esito or "ES03")
    if file.errors:
        lista = etree.SubElement(root, "ListaErrori")
        for error in file.errors:
            errore = etree.SubElement(lista, "Errore")
            add(errore, "Codice", error["Codice"])
            add(errore, "Descrizione", _latin(error["Descrizione"]))
    add(root, "MessageID", f"{file.id}01")
    signed = signing.sign(session, root, clock)
    return etree.tostring(signed, xml_declaration=True, encoding="UTF-8")


def _latin(text: str) -> str:
    return "".join(c if ord(c) < 256 else "?" for c in text).strip() or "-"
