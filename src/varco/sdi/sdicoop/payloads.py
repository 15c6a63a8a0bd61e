"""The messages of the SDICoop operations as dataclasses (spec words), and their XML elements.

Field order in `XML` is the XSD sequence; the child elements are unqualified (the types XSDs have
no elementFormDefault), only the Body element carries the service's types namespace.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, fields, is_dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, ClassVar

from lxml import etree


class ErroreInvio(StrEnum):
    EI01 = "EI01"  # file vuoto: permanent
    EI02 = "EI02"  # servizio non disponibile: temporary, retry
    EI03 = "EI03"  # utente non abilitato: permanent
    EI04 = "EI04"  # tipo file non corretto (SdITrasmissioneFile only): permanent


class EsitoNotifica(StrEnum):
    ES00 = "ES00"  # notifica non accettata (ScartoEsito carries the reason)
    ES01 = "ES01"  # notifica accettata
    ES02 = "ES02"  # servizio non disponibile: retry


class EsitoRicezione(StrEnum):
    ER01 = "ER01"  # presa in carico


class StatoFile(StrEnum):
    SF01 = "SF01"  # in elaborazione: poll again
    SF02 = "SF02"  # elaborato: Notifica is the outcome
    SF03 = "SF03"  # errore


class ErroreEsito(StrEnum):
    EE01 = "EE01"  # servizio non disponibile
    EE02 = "EE02"  # utente non abilitato


class TipoFile(StrEnum):  # trasmissione PDF p. 25; the XSD itself allows any string
    DF = "DF"
    LI = "LI"
    FL = "FL"


@dataclass(frozen=True)
class Exchange:
    """The HTTP exchange of a call, as sent and received (store it: it is the evidence)."""

    url: str
    soap_action: str
    request: bytes
    request_content_type: str
    status: int | None = None
    response: bytes = b""
    response_content_type: str = ""


# --- requests ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileSdIBase:
    """fileSdIAccoglienza (RiceviFile), ScartoEsito, Notifica: a named file."""

    nome_file: str
    file: bytes
    XML: ClassVar = (("nome_file", "NomeFile"), ("file", "File"))


@dataclass(frozen=True)
class FileSdI:
    """fileSdI_Type: every notification (TrasmissioneFatture, DT of RicezioneFatture, EC)."""

    identificativo_sdi: int
    nome_file: str
    file: bytes
    XML: ClassVar = (("identificativo_sdi", "IdentificativoSdI"), ("nome_file", "NomeFile"), ("file", "File"))


@dataclass(frozen=True)
class FileSdIConMetadati:
    """RiceviFatture: the invoice file and its metadata file (MT)."""

    identificativo_sdi: int
    nome_file: str
    file: bytes
    nome_file_metadati: str
    metadati: bytes
    XML: ClassVar = (
        ("identificativo_sdi", "IdentificativoSdI"),
        ("nome_file", "NomeFile"),
        ("file", "File"),
        ("nome_file_metadati", "NomeFileMetadati"),
        ("metadati", "Metadati"),
    )


@dataclass(frozen=True)
class FileTrasmissione:
    """SdITrasmissioneFile.Trasmetti: an LI/DF file (or FL archive)."""

    nome_file: str
    tipo_file: str
    file: bytes
    XML: ClassVar = (("nome_file", "NomeFile"), ("tipo_file", "TipoFile"), ("file", "File"))


@dataclass(frozen=True)
class RichiestaEsito:
    """SdITrasmissioneFile.Esito: the outcome of a file, by IDFile."""

    id_file: int
    XML: ClassVar = (("id_file", "IDFile"),)


Request = FileSdIBase | FileSdI | FileSdIConMetadati | FileTrasmissione | RichiestaEsito

# --- answers ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RispostaRiceviFile:
    """IdentificativoSdI and DataOraRicezione are mandatory in the XSD; with Errore they mean nothing."""

    identificativo_sdi: int | None
    data_ora_ricezione: datetime | None
    errore: ErroreInvio | None = None
    exchange: Exchange | None = field(default=None, compare=False, repr=False)
    XML: ClassVar = (
        ("identificativo_sdi", "IdentificativoSdI"),
        ("data_ora_ricezione", "DataOraRicezione"),
        ("errore", "Errore"),
    )


@dataclass(frozen=True)
class RispostaRiceviFatture:
    esito: EsitoRicezione = EsitoRicezione.ER01
    XML: ClassVar = (("esito", "Esito"),)


@dataclass(frozen=True)
class RispostaNotificaEsito:
    esito: EsitoNotifica
    scarto_esito: FileSdIBase | None = None  # only with ES00
    exchange: Exchange | None = field(default=None, compare=False, repr=False)
    XML: ClassVar = (("esito", "Esito"), ("scarto_esito", "ScartoEsito"))


@dataclass(frozen=True)
class RispostaTrasmetti:
    id_file: int | None
    data_ora_ricezione: datetime | None
    errore: ErroreInvio | None = None
    exchange: Exchange | None = field(default=None, compare=False, repr=False)
    XML: ClassVar = (("id_file", "IDFile"), ("data_ora_ricezione", "DataOraRicezione"), ("errore", "Errore"))


@dataclass(frozen=True)
class DettaglioArchivio:
    nome_file: str
    id_file: int
    XML: ClassVar = (("nome_file", "NomeFile"), ("id_file", "IDFile"))


@dataclass(frozen=True)
class RispostaEsito:
    esito: StatoFile
    notifica: FileSdIBase | None = None
    dettaglio_archivio: tuple[DettaglioArchivio, ...] = ()
    errore: ErroreEsito | None = None
    exchange: Exchange | None = field(default=None, compare=False, repr=False)
    XML: ClassVar = (
        ("esito", "Esito"),
        ("notifica", "Notifica"),
        ("dettaglio_archivio", "DettaglioArchivio"),
        ("errore", "Errore"),
    )


Answer = (
    RispostaRiceviFile | RispostaRiceviFatture | RispostaNotificaEsito | RispostaTrasmetti | RispostaEsito
)

# --- XML --------------------------------------------------------------------------------------


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("DataOraRicezione must be an aware datetime")
        return value.isoformat(timespec="milliseconds")
    if isinstance(value, StrEnum):
        return value.value
    return str(value)


def _fill(parent: etree._Element, message: Any) -> None:
    for attribute, name in message.XML:
        value = getattr(message, attribute)
        for item in value if isinstance(value, tuple) else (value,):
            if item is None:
                continue
            child = etree.SubElement(parent, name)
            if is_dataclass(item):
                _fill(child, item)
            else:
                child.text = _text(item)


def to_element(qname: etree.QName, message: Request | Answer) -> etree._Element:
    """The Body element `qname` holding the message (unqualified children, XSD order)."""
    element = etree.Element(qname.text, nsmap={"ns": qname.namespace})
    _fill(element, message)
    return element


_BY_FIELDS: dict[frozenset[str], type] = {
    frozenset(name for _, name in kind.XML): kind
    for kind in (FileSdIBase, FileSdI, FileSdIConMetadati, FileTrasmissione, RichiestaEsito)
}


def _value(kind: type, attribute: str, text: str) -> Any:
    annotation = {f.name: f.type for f in fields(kind)}[attribute]
    if annotation == "bytes":
        return base64.b64decode("".join(text.split()), validate=True)
    if annotation == "int":
        # The XSDs bound the digits (12 or 15) but not leading zeros, and int() refuses past 4300.
        sign, digits = ("-", text.strip()[1:]) if text.strip().startswith("-") else ("", text.strip())
        digits = digits.removeprefix("+").lstrip("0") or "0"
        if len(digits) > 18 or not (digits.isascii() and digits.isdigit()):
            raise ValueError(f"{_xml_name(kind, attribute)} is not a whole number of at most 18 digits")
        return int(sign + digits)
    return text.strip() if attribute == "tipo_file" else text


def _xml_name(kind: type, attribute: str) -> str:
    return dict(kind.XML)[attribute]  # type: ignore[attr-defined]


def request_from_element(element: etree._Element) -> Request:
    """The request carried by a Body element that already passed the XSD (so its shape is known)."""
    texts = {
        etree.QName(child).localname: child.text or "" for child in element if isinstance(child.tag, str)
    }
    kind = _BY_FIELDS.get(frozenset(texts))
    if kind is None:
        raise ValueError(f"no SDICoop request has the elements {sorted(texts)}")
    return kind(**{attribute: _value(kind, attribute, texts[name]) for attribute, name in kind.XML})
