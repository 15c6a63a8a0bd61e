"""SDI message files (MessaggiTypes v1.1): names, builders, the XSD, and a parser.

Builders return unsigned elements; the simulator adds the `ds:Signature` the schema requires on
every message to a transmitter (MT and EC have none / an optional one).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import datetime
from importlib import resources
from zoneinfo import ZoneInfo

from lxml import etree

from varco.fatturapa.schema import compile_schema
from varco.invoices.filenames import stem

NS = "http://www.fatturapa.gov.it/sdi/messaggi/v1.0"
NS_DS = "http://www.w3.org/2000/09/xmldsig#"
ROME = ZoneInfo("Europe/Rome")

ROOTS: dict[str, str] = {
    "RC": "RicevutaConsegna",
    "NS": "NotificaScarto",
    "MC": "NotificaMancataConsegna",
    "NE": "NotificaEsito",
    "DT": "NotificaDecorrenzaTermini",
    "AT": "AttestazioneTrasmissioneFattura",
    "MT": "MetadatiInvioFile",
    "EC": "NotificaEsitoCommittente",
    "SE": "ScartoEsitoCommittente",
}
TYPES: dict[str, str] = {root: type_ for type_, root in ROOTS.items()}
SIGNED = frozenset({"RC", "NS", "MC", "NE", "DT", "AT", "SE"})  # ds:Signature mandatory
_DATA = resources.files("varco.sdi") / "data"
_local = threading.local()


class MessageError(ValueError):
    """Not an SDI message we understand (malformed XML, wrong schema, unknown type)."""


@dataclass(frozen=True)
class InvoiceRef:
    """RiferimentoFattura: one invoice inside a batch file."""

    numero: str
    anno: int
    posizione: int | None = None


@dataclass(frozen=True)
class Message:
    type: str
    sdi_id: str
    filename: str | None  # NomeFile (absent from EC and SE)
    message_id: str | None = None
    esito: str | None = None  # EC01 | EC02 (NE, EC)
    ref: InvoiceRef | None = None
    description: str | None = None
    errors: list[dict[str, str]] = field(default_factory=list)  # NS ListaErrori
    delivered_at: datetime | None = None  # RC DataOraConsegna
    recipient_code: str | None = None  # MT
    format: str | None = None  # MT
    scarto: str | None = None  # SE: EN00 | EN01


# -- names and times -------------------------------------------------------------------------


def message_name(invoice_filename: str, type_: str, progressive: int) -> str:
    """decisions.md: `<invoice name without extension>_<TYPE>_<3 digits>.xml`."""
    return f"{stem(invoice_filename)}_{type_}_{progressive:03d}.xml"


def sdi_datetime(value: datetime) -> str:
    """xsd:dateTime as the SDI writes it: Italian local time, milliseconds, offset."""
    return value.astimezone(ROME).isoformat(timespec="milliseconds")


# -- builders --------------------------------------------------------------------------------

Value = str | int | list["tuple[str, Value | None]"] | None


def _build(type_: str, fields: list[tuple[str, Value]], **attributes: str) -> etree._Element:
    root = etree.Element(
        f"{{{NS}}}{ROOTS[type_]}", nsmap={"types": NS, "ds": NS_DS}, versione="1.0", **attributes
    )
    _append(root, fields)
    return root


def _append(parent: etree._Element, fields: list[tuple[str, Value]]) -> None:
    for name, value in fields:
        if value is None:
            continue
        child = etree.SubElement(parent, name)
        if isinstance(value, list):
            _append(child, value)
        else:
            child.text = str(value)


def _ref(ref: InvoiceRef | None) -> Value:
    if ref is None:
        return None
    return [("NumeroFattura", ref.numero), ("AnnoFattura", ref.anno), ("PosizioneFattura", ref.posizione)]


def _recipient(code: str, description: str) -> Value:
    return [("Codice", code), ("Descrizione", description)]


def ricevuta_consegna(
    sdi_id: str,
    filename: str,
    received_at: datetime,
    delivered_at: datetime,
    recipient: tuple[str, str],
    message_id: str,
    *,
    dual_role: bool = False,
) -> etree._Element:
    fields: list[tuple[str, Value]] = [
        ("IdentificativoSdI", sdi_id),
        ("NomeFile", filename),
        ("DataOraRicezione", sdi_datetime(received_at)),
        ("DataOraConsegna", sdi_datetime(delivered_at)),
        ("Destinatario", _recipient(*recipient)),
        ("MessageId", message_id),
    ]
    # The SDI marks messages to an intermediary that is also the recipient's channel.
    return _build("RC", fields, **({"IntermediarioConDupliceRuolo": "Si"} if dual_role else {}))


def notifica_scarto(
    sdi_id: str, filename: str, received_at: datetime, errors: list[dict[str, str]], message_id: str
) -> etree._Element:
    lista: Value = [
        ("Errore", [("Codice", e["code"]), ("Descrizione", e["description"][:255])]) for e in errors[:200]
    ]
    fields: list[tuple[str, Value]] = [
        ("IdentificativoSdI", sdi_id),
        ("NomeFile", filename),
        ("DataOraRicezione", sdi_datetime(received_at)),
        ("ListaErrori", lista),
        ("MessageId", message_id),
    ]
    return _build("NS", fields)


def mancata_consegna(
    sdi_id: str, filename: str, received_at: datetime, description: str, message_id: str
) -> etree._Element:
    fields: list[tuple[str, Value]] = [
        ("IdentificativoSdI", sdi_id),
        ("NomeFile", filename),
        ("DataOraRicezione", sdi_datetime(received_at)),
        ("Descrizione", description[:255]),
        ("MessageId", message_id),
    ]
    return _build("MC", fields)


def attestazione(
    sdi_id: str,
    filename: str,
    received_at: datetime,
    recipient: tuple[str, str],
    message_id: str,
    file_hash: str,
) -> etree._Element:
    fields: list[tuple[str, Value]] = [
        ("IdentificativoSdI", sdi_id),
        ("NomeFile", filename),
        ("DataOraRicezione", sdi_datetime(received_at)),
        ("Destinatario", _recipient(*recipient)),
        ("MessageId", message_id),
        ("HashFileOriginale", file_hash),
    ]
    return _build("AT", fields)


def esito_committente(
    sdi_id: str,
    esito: str,
    ref: InvoiceRef | None,
    description: str | None,
    message_id_committente: str | None,
) -> etree._Element:
    """EC: what the recipient sends the SDI (and the SDI forwards inside NE)."""
    return _build("EC", _esito_fields(sdi_id, esito, ref, description, message_id_committente))


def _esito_fields(
    sdi_id: str, esito: str, ref: InvoiceRef | None, description: str | None, message_id: str | None
) -> list[tuple[str, Value]]:
    return [
        ("IdentificativoSdI", sdi_id),
        ("RiferimentoFattura", _ref(ref)),
        ("Esito", esito),
        ("Descrizione", description[:255] if description else None),
        ("MessageIdCommittente", message_id),
    ]


def notifica_esito(
    sdi_id: str,
    filename: str,
    esito: str,
    ref: InvoiceRef | None,
    description: str | None,
    message_id_committente: str | None,
    message_id: str,
) -> etree._Element:
    root = _build("NE", [("IdentificativoSdI", sdi_id), ("NomeFile", filename)])
    inner = etree.SubElement(root, "EsitoCommittente", versione="1.0")
    _append(inner, _esito_fields(sdi_id, esito, ref, description, message_id_committente))
    _append(root, [("MessageId", message_id)])
    return root


def decorrenza_termini(
    sdi_id: str, filename: str, description: str, message_id: str, ref: InvoiceRef | None = None
) -> etree._Element:
    fields: list[tuple[str, Value]] = [
        ("IdentificativoSdI", sdi_id),
        ("RiferimentoFattura", _ref(ref)),
        ("NomeFile", filename),
        ("Descrizione", description[:255]),
        ("MessageId", message_id),
    ]
    return _build("DT", fields)


def metadati(
    sdi_id: str, filename: str, recipient_code: str, format_: str, message_id: str
) -> etree._Element:
    fields: list[tuple[str, Value]] = [
        ("IdentificativoSdI", sdi_id),
        ("NomeFile", filename),
        ("CodiceDestinatario", recipient_code),
        ("Formato", format_),
        ("TentativiInvio", 1),
        ("MessageId", message_id),
    ]
    return _build("MT", fields)


def scarto_esito(
    sdi_id: str,
    ref: InvoiceRef | None,
    scarto: str,
    message_id: str,
    message_id_committente: str | None,
    note: str,
) -> etree._Element:
    fields: list[tuple[str, Value]] = [
        ("IdentificativoSdI", sdi_id),
        ("RiferimentoFattura", _ref(ref)),
        ("Scarto", scarto),
        ("MessageId", message_id),
        ("MessageIdCommittente", message_id_committente),
        ("Note", note),
    ]
    return _build("SE", fields)


def serialize(root: etree._Element) -> bytes:
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


# -- schema and parser -----------------------------------------------------------------------


def schema() -> etree.XMLSchema:
    """MessaggiTypes v1.1, compiled once per thread (an XMLSchema keeps its error log)."""
    compiled = getattr(_local, "schema", None)
    if compiled is None:
        xsd = (_DATA / "MessaggiTypes_v1.1.xsd").read_bytes()
        compiled = _local.schema = compile_schema(xsd, "MessaggiTypes_v1.1.xsd")
    return compiled


def validation_errors(xml: bytes) -> list[str]:
    """XSD errors of a message file ([] when valid)."""
    try:
        root = _parse_xml(xml)
    except MessageError as exc:
        return [str(exc)]
    return _schema_errors(root)


def _schema_errors(root: etree._Element) -> list[str]:
    checker = schema()
    if checker.validate(root):
        return []
    return [f"line {e.line}: {e.message}" for e in checker.error_log]


def _parse_xml(xml: bytes) -> etree._Element:
    parser = etree.XMLParser(no_network=True, resolve_entities=False, load_dtd=False, huge_tree=False)
    try:
        return etree.fromstring(xml, parser)
    except etree.XMLSyntaxError as exc:
        raise MessageError(f"not well-formed XML: {exc}") from None


def parse(xml: bytes, root: etree._Element | None = None) -> Message:
    """Read an SDI message after validating it against MessaggiTypes v1.1; `root`: `xml` already
    parsed by a parser at least as strict as this module's (one parse, not two)."""
    if root is None:
        root = _parse_xml(xml)
    qname = etree.QName(root)
    if qname.namespace != NS or qname.localname not in TYPES:
        raise MessageError(f"{qname.text} is not an SDI message")
    try:
        errors = _schema_errors(root)
    except etree.Error as exc:  # e.g. a DTD the validator refuses
        raise MessageError(f"not valid against MessaggiTypes v1.1: {exc}") from None
    if errors:
        raise MessageError("not valid against MessaggiTypes v1.1: " + "; ".join(errors[:3]))
    try:
        return _read(root)
    except (ValueError, OverflowError) as exc:  # values the XSD allows and Python cannot hold
        raise MessageError(f"a value cannot be read: {exc}") from None


def _read(root: etree._Element) -> Message:
    type_ = TYPES[etree.QName(root).localname]
    esito_block = root.find("EsitoCommittente") if type_ == "NE" else root
    delivered = root.findtext("DataOraConsegna")
    return Message(
        type=type_,
        sdi_id=root.findtext("IdentificativoSdI") or "",
        filename=root.findtext("NomeFile"),
        message_id=root.findtext("MessageId") or root.findtext("MessageIdCommittente"),
        esito=esito_block.findtext("Esito") if esito_block is not None else None,
        ref=_read_ref(esito_block.find("RiferimentoFattura") if esito_block is not None else None),
        description=(esito_block.findtext("Descrizione") if esito_block is not None else None)
        or root.findtext("Note"),
        errors=[
            {"code": e.findtext("Codice") or "", "description": e.findtext("Descrizione") or ""}
            for e in root.iterfind("ListaErrori/Errore")
        ],
        delivered_at=datetime.fromisoformat(delivered) if delivered else None,
        recipient_code=root.findtext("CodiceDestinatario"),
        format=root.findtext("Formato"),
        scarto=root.findtext("Scarto"),
    )


def _read_ref(element: etree._Element | None) -> InvoiceRef | None:
    if element is None:
        return None
    position = element.findtext("PosizioneFattura")
    return InvoiceRef(
        numero=element.findtext("NumeroFattura") or "",
        anno=int(element.findtext("AnnoFattura") or 0),
        posizione=int(position) if position else None,
    )
