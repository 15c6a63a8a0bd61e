"""Calls varco makes to the SDI (SdIRiceviFile, SdIRiceviNotifica, SdITrasmissioneFile) through zeep.

zeep reads the official WSDLs from package data and builds the requests; the service addresses
come from `ClientConfig`. Every result carries the `Exchange` (raw request and answer bytes) to be
stored; every failure is an `SdiCallError` saying whether the SDI may have the file (errors.py).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

import zeep
import zeep.exceptions
import zeep.wsdl

from varco.sdi.sdicoop import envelope, transport
from varco.sdi.sdicoop.contracts import Service, contract
from varco.sdi.sdicoop.envelope import Fault
from varco.sdi.sdicoop.errors import MaybeReceived, NotReceived, Reason, SdiCallError
from varco.sdi.sdicoop.payloads import (
    DettaglioArchivio,
    ErroreEsito,
    ErroreInvio,
    EsitoNotifica,
    Exchange,
    FileSdI,
    FileSdIBase,
    FileTrasmissione,
    Request,
    RichiestaEsito,
    RispostaEsito,
    RispostaNotificaEsito,
    RispostaRiceviFile,
    RispostaTrasmetti,
    StatoFile,
    TipoFile,
    to_element,
)
from varco.sdi.sdicoop.schemas import data_file, schema, validation_error

logger = logging.getLogger(__name__)
_Code = TypeVar("_Code", bound=StrEnum)

_SETTINGS = zeep.Settings(
    strict=True, xml_huge_tree=False, forbid_dtd=True, forbid_entities=True, forbid_external=True
)


@dataclass(frozen=True)
class ClientConfig:
    """Where and how to reach the SDI; given explicitly, the process environment plays no part."""

    cert_path: Path  # varco's client certificate (PEM)
    key_path: Path  # its private key (PEM, unencrypted)
    ca_path: Path | None  # the SDI's CA bundle; None: requests' bundled CAs (never REQUESTS_CA_BUNDLE)
    ricevi_file_url: str | None = None  # SdIRiceviFile, e.g. https://servizi.fatturapa.it/ricevi_file
    ricevi_notifica_url: str | None = None  # SdIRiceviNotifica
    trasmissione_file_url: str | None = None  # SdITrasmissioneFile (LI/DF)
    timeout_seconds: float = 60.0  # to connect, and between bytes of the answer

    def url(self, service: Service) -> str:
        urls = {
            Service.SDI_RICEVI_FILE: self.ricevi_file_url,
            Service.SDI_RICEVI_NOTIFICA: self.ricevi_notifica_url,
            Service.SDI_TRASMISSIONE_FILE: self.trasmissione_file_url,
        }
        url = urls.get(service)
        if not url:
            raise EndpointMissing(f"no endpoint configured for {service} (VARCO_SDICOOP_*_URL)")
        return url


class EndpointMissing(LookupError):
    """No URL is configured for the service: nothing was sent (not ValueError: that is a refusal)."""


@cache
def _document(service: Service) -> zeep.wsdl.Document:
    # Parsed once per process; the transport here only loads the WSDL's local XSD import.
    return zeep.wsdl.Document(
        str(data_file(contract(service).wsdl_file)), transport.OfflineTransport(), settings=_SETTINGS
    )


def _check(service: Service, operation: str, payload: Request) -> None:
    """Refuse, before any I/O, what the XSD forbids (NomeFile pattern, digits): a local, permanent error."""
    spec = contract(service)
    error = validation_error(schema(spec.types_file), to_element(spec.operation(operation).input, payload))
    if error:
        raise ValueError(f"{operation}: {error}")


def _code(kind: type[_Code], value: Any, exchange: Exchange) -> _Code | None:
    if value is None:
        return None
    try:
        return kind(str(value).strip())
    except ValueError:
        raise MaybeReceived(
            f"unknown code {value!r} in the answer", reason=Reason.BAD_ANSWER, exchange=exchange
        ) from None


def _datetime(value: Any) -> datetime | None:
    # zeep gives isodate's FixedOffset zones; the standard library's compare and pickle better
    return None if value is None else datetime.fromisoformat(value.isoformat())


def _named_file(value: Any) -> FileSdIBase | None:
    return None if value is None else FileSdIBase(value.NomeFile, bytes(value.File or b""))


class SdiClient:
    """One per configuration, reused across calls (the WSDLs are parsed once per process). Each call
    records its own exchange; requests does not promise a Session is thread-safe, so give each worker
    thread its own client."""

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        ca = str(config.ca_path) if config.ca_path is not None else None
        self._session = transport.make_session((str(config.cert_path), str(config.key_path)), ca)
        self._transport = transport.SdiTransport(self._session, config.timeout_seconds)
        self._services: dict[Service, Any] = {}

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> SdiClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _service(self, service: Service) -> Any:
        if service not in self._services:
            client = zeep.Client(wsdl=_document(service), transport=self._transport, settings=_SETTINGS)
            self._services[service] = client.create_service(
                contract(service).binding.text, self.config.url(service)
            )
        return self._services[service]

    def _call(self, service: Service, operation: str, **params: Any) -> tuple[Any, Exchange]:
        proxy = self._service(service)
        call, token = transport.begin_call()
        try:
            answer = getattr(proxy, operation)(**params)
        except SdiCallError:
            raise
        except zeep.exceptions.Fault as exc:  # a Fault with HTTP 200 (the transport saw the others)
            fault = Fault(str(exc.code or "Server").rpartition(":")[2], str(exc.message or ""))
            kind = NotReceived if fault.is_client else MaybeReceived
            raise kind(
                f"SOAP Fault {fault.faultcode}: {fault.faultstring}",
                reason=Reason.SOAP_FAULT,
                exchange=_exchange(call),
                fault=fault,
            ) from None
        except zeep.exceptions.XMLParseError as exc:
            answer = _errore_only(_exchange(call))
            if answer is None:
                raise MaybeReceived(
                    f"unreadable answer: {exc}", reason=Reason.BAD_ANSWER, exchange=_exchange(call)
                ) from exc
        except Exception as exc:  # zeep could not read the answer: the request did go out
            raise MaybeReceived(
                f"unreadable answer: {type(exc).__name__}: {exc}",
                reason=Reason.BAD_ANSWER,
                exchange=_exchange(call),
            ) from exc
        finally:
            transport.end_call(token)
        exchange = _exchange(call)
        if answer is None:
            raise MaybeReceived("empty answer", reason=Reason.BAD_ANSWER, exchange=exchange)
        return answer, exchange

    def ricevi_file(self, nome_file: str, file: bytes) -> RispostaRiceviFile:
        """SdIRiceviFile.RiceviFile: send an invoice file (or archive); IdentificativoSdI, or Errore."""
        _check(Service.SDI_RICEVI_FILE, "RiceviFile", FileSdIBase(nome_file, file))
        answer, exchange = self._call(Service.SDI_RICEVI_FILE, "RiceviFile", NomeFile=nome_file, File=file)
        result = RispostaRiceviFile(
            answer.IdentificativoSdI,
            _datetime(answer.DataOraRicezione),
            _code(ErroreInvio, answer.Errore, exchange),
            exchange,
        )
        _require_id(result.errore, result.identificativo_sdi, "IdentificativoSdI", exchange)
        logger.debug("RiceviFile %s → %s %s", nome_file, result.identificativo_sdi, result.errore or "")
        return result

    def notifica_esito(self, identificativo_sdi: int, nome_file: str, file: bytes) -> RispostaNotificaEsito:
        """SdIRiceviNotifica.NotificaEsito: send an EC; ES01 accepted, ES00 + ScartoEsito, ES02 retry."""
        _check(Service.SDI_RICEVI_NOTIFICA, "NotificaEsito", FileSdI(identificativo_sdi, nome_file, file))
        answer, exchange = self._call(
            Service.SDI_RICEVI_NOTIFICA,
            "NotificaEsito",
            IdentificativoSdI=identificativo_sdi,
            NomeFile=nome_file,
            File=file,
        )
        esito = _code(EsitoNotifica, answer.Esito, exchange)
        if esito is None:
            raise MaybeReceived("answer without Esito", reason=Reason.BAD_ANSWER, exchange=exchange)
        return RispostaNotificaEsito(esito, _named_file(answer.ScartoEsito), exchange)

    def trasmetti(self, nome_file: str, tipo_file: TipoFile | str, file: bytes) -> RispostaTrasmetti:
        """SdITrasmissioneFile.Trasmetti: send an LI/DF file; IDFile, or Errore EI01–EI04."""
        tipo = str(tipo_file)
        _check(Service.SDI_TRASMISSIONE_FILE, "Trasmetti", FileTrasmissione(nome_file, tipo, file))
        answer, exchange = self._call(
            Service.SDI_TRASMISSIONE_FILE, "Trasmetti", NomeFile=nome_file, TipoFile=tipo, File=file
        )
        errore = _code(ErroreInvio, answer.Errore, exchange)
        result = RispostaTrasmetti(answer.IDFile, _datetime(answer.DataOraRicezione), errore, exchange)
        _require_id(result.errore, result.id_file, "IDFile", exchange)
        return result

    def esito(self, id_file: int) -> RispostaEsito:
        """SdITrasmissioneFile.Esito: the state of an LI/DF file (SF01/SF02/SF03), or Errore EE01/EE02."""
        _check(Service.SDI_TRASMISSIONE_FILE, "Esito", RichiestaEsito(id_file))
        answer, exchange = self._call(Service.SDI_TRASMISSIONE_FILE, "Esito", IDFile=id_file)
        esito = _code(StatoFile, answer.Esito, exchange)
        if esito is None:
            raise MaybeReceived("answer without Esito", reason=Reason.BAD_ANSWER, exchange=exchange)
        dettaglio = tuple(DettaglioArchivio(d.NomeFile, d.IDFile) for d in answer.DettaglioArchivio or ())
        return RispostaEsito(
            esito,
            _named_file(answer.Notifica),
            dettaglio,
            _code(ErroreEsito, answer.Errore, exchange),
            exchange,
        )


class _ErroreOnly:
    """An answer reduced to its Errore; every other field reads as absent."""

    def __init__(self, errore: str) -> None:
        self.Errore = errore

    def __getattr__(self, name: str) -> None:
        return None


def _errore_only(exchange: Exchange) -> _ErroreOnly | None:
    # zeep (strict) refuses an answer without the XSD's mandatory IdentificativoSdI/IDFile; with an
    # Errore they mean nothing, and a server that leaves them null (JAXB omits null elements) sends
    # just that. Reading the Errore keeps EI02 a retry instead of an unknown outcome.
    try:
        payload = envelope.read(exchange.response_content_type, exchange.response).payload
    except ValueError:
        return None
    errore = (payload.findtext("Errore") or "").strip()
    return _ErroreOnly(errore) if errore else None


def _exchange(call: transport.CallRecord) -> Exchange:
    return call.exchange or Exchange("", "", b"", "")


def _require_id(errore: object, identifier: object, name: str, exchange: Exchange) -> None:
    # Lenient where it cannot matter (an answer with Errore may lack the mandatory id), strict where
    # it does: a success without an id would lose the file's identity.
    if errore is None and identifier is None:
        raise MaybeReceived(
            f"answer without Errore and without {name}", reason=Reason.BAD_ANSWER, exchange=exchange
        )
