"""What each parameter of the OpenAPI document is: its type and format, whether the contract
requires it, what it means, an example.

Query values are declared `str | None` on the routes so that a wrong one gets varco's own 400 in
the contract's shape (never FastAPI's 422); the document would then type every one `string|null`.
This table says instead what the route's parsing accepts (search/params.py, core/numbers.py,
search/dates.py, accounts/multisellers/service.py, callbacks/feed.py), once per name, with the
routes where one name means something else listed before the shared entries. `required` is the
contract's (or decisions.md's): the route still answers a missing one with its own 400 0002.
Examples given here are fallbacks; those of the recorded exchange replace them (openapi_examples).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from varco.core.numbers import MAX_BIGINT, MAX_ID
from varco.invoices.states import LABELS
from varco.settings import Settings

DATE_TIME_FORMS = (
    "ISO 8601 date-time, e.g. 2026-11-23T09:00:00+01:00 or 2026-11-23T08:00:00Z. Also accepted: a "
    "date alone (2026-11-23: the day's start, or for an end bound its end), a date-time without a "
    "zone (Italian time, up to 7 fractional digits: 2026-11-23T09:00:00.0000000), a space for T, "
    "percent-encoded colons. A blank value is the same as none."
)
BOOLEAN_FORMS = "true or false (also accepted: 1, 0, yes, no, in any case); blank or absent: false"


@dataclass(frozen=True)
class Param:
    """One parameter's documentation; `schema` None keeps the one the route declares."""

    description: str
    example: Any
    schema: dict[str, Any] | None = None
    required: bool = False
    blank_is_absent: bool = True  # decisions.md: clients send empty strings for unused fields


def _text(description: str, example: str, *, required: bool = False) -> Param:
    return Param(description, example, {"type": "string"}, required)


def _date_time(description: str, example: str, *, required: bool = False) -> Param:
    return Param(
        f"{description}. {DATE_TIME_FORMS}", example, {"type": "string", "format": "date-time"}, required
    )


def _flag(description: str) -> Param:
    return Param(f"{description}: {BOOLEAN_FORMS}", True, {"type": "boolean", "default": False})


def _whole(description: str, example: int, low: int, high: int, default: int | None = None) -> Param:
    schema: dict[str, Any] = {"type": "integer", "format": "int64", "minimum": low, "maximum": high}
    if high <= MAX_ID:
        schema["format"] = "int32"
    if default is not None:
        schema["default"] = default
    return Param(description, example, schema)


def _table(settings: Settings) -> tuple[list[tuple[re.Pattern[str], dict[str, Param]]], dict[str, Param]]:
    """(routes whose names mean something of their own, the names shared by every other route)."""
    size_max, size_default = settings.page_size_max, settings.page_size_default
    states = ", ".join(f"{state.value} {label}" for state, label in LABELS.items())
    invoice_name = "File name of the invoice (SDI file), e.g. IT05555550028_00001.xml"
    notification_name = "File name of the notification, e.g. IT05555550028_00001_RC_001.xml"
    routes: list[tuple[str, dict[str, Param]]] = [
        (
            r"/auth/multicedenti.*",
            {
                "countryCode": _text("Only assignors of this country: two letters, any case (§4.1)", "IT"),
                "vatCode": _text(
                    "Only the assignor with this VAT number: 1-28 letters or digits (§4.1)", "09876540015"
                ),
                "status": _text(
                    "Only assignors in this state: ACTIVE, SUSPEND, INACTIVE or PENDING, any case (§3.3)",
                    "ACTIVE",
                ),
                "page": _whole(
                    "Page number, 1-based, between 1 and totalPages (§4.1)", 1, 1, MAX_BIGINT // size_max, 1
                ),
                "id": _text("The multiseller identifier (`id` of the list, §2.4)", "1"),
            },
        ),
        (
            r"/api/v2/admin/sdi/scenarios",
            {
                "recipientCode": _text(
                    "Delete the rule of this recipient code (1.1.4 CodiceDestinatario)", "0000000"
                ),
                "filename": _text("Delete the rule of this invoice file name", "IT05555550028_00001.xml"),
            },
        ),
        (
            r"/api/v2/invoices-(out|in)/notifications/detail|/services/notification/(out|in)/getByFilename",
            {"filename": _text(notification_name, "IT05555550028_00001_RC_001.xml", required=True)},
        ),
        (
            r"/services/invoice/(out|in)/(getByFilename|getZipByFilename)",
            {"filename": _text(invoice_name, "IT05555550028_00001.xml", required=True)},
        ),
        (
            r"/services/invoice/(out|in)/getByIdSdi",
            {
                "idSdi": _text(
                    "The Exchange System's identifier of the file (IdentificativoSdI)",
                    "100000001",
                    required=True,
                )
            },
        ),
        (
            r"/services/notification/(out|in)/getByInvoiceFilename",
            {"invoiceFilename": _text(invoice_name, "IT05555550028_00001.xml", required=True)},
        ),
        (
            r"/services/invoice/in/sendEsitoCommittente/.*",
            {
                "filename": _text(
                    "The received invoice's file name, or that of the outcome sent on it",
                    "IT07111110032_00001.xml",
                )
            },
        ),
        (
            r"/api/v2/admin/audit",
            {
                "kind": _text(
                    "Only events of this kind, or of every kind under this dotted prefix "
                    "(auth.signin: succeeded and failed; auth: every sign-in, token and password event)",
                    "auth.signin.failed",
                ),
                "username": _text(
                    "Only events whose actor or subject has this user name (exact; a refused sign-in "
                    "names the user name as typed)",
                    "demo-premium",
                ),
                "ip": _text("Only events from this client address (IPv4 or IPv6)", "203.0.113.7"),
                "from": _date_time("Only events from this instant (inclusive)", "2026-11-23T00:00:00+01:00"),
                "to": _date_time("Only events until this instant (inclusive)", "2026-11-24T23:59:59+01:00"),
            },
        ),
        (
            r"/api/v2/callbacks/.*/deliveries",
            {"limit": _whole("How many deliveries, newest first (default 20)", 20, 1, 100, 20)},
        ),
    ]
    shared: dict[str, Param] = {
        # Pages (decisions.md "Page object", §8.1)
        "page": _whole("Page number, 1-based", 1, 1, MAX_BIGINT // size_max, 1),
        "size": _whole(f"Page size, 1 to {size_max}", size_default, 1, size_max, size_default),
        # Searches, version 2
        "creationStartDate": _date_time(
            "Start of the creation window (required with creationEndDate; at most "
            f"{settings.search_window.days} days apart)",
            "2026-11-23T00:00:00+01:00",
            required=True,
        ),
        "creationEndDate": _date_time(
            "End of the creation window (required with creationStartDate)",
            "2026-11-24T23:59:59+01:00",
            required=True,
        ),
        "modifiedStartDate": _date_time(
            "Only invoices changed from this instant (give modifiedEndDate too, or neither)",
            "2026-11-23T00:00:00+01:00",
        ),
        "modifiedEndDate": _date_time(
            "Only invoices changed until this instant", "2026-11-24T23:59:59+01:00"
        ),
        "senderCountry": _text("Supplier's country code (1.2.1.1.1), e.g. IT", "IT"),
        "senderVatcode": _text("Supplier's VAT number (1.2.1.1.2)", "01234560017"),
        "senderFiscalcode": _text("Supplier's tax code (1.2.1.2)", "01234560017"),
        "receiverCountry": _text("Customer's country code (1.4.1.1.1), e.g. IT", "IT"),
        "receiverVatcode": _text("Customer's VAT number (1.4.1.1.2)", "09876540015"),
        "receiverFiscalcode": _text("Customer's tax code (1.4.1.2)", "09876540015"),
        "status": _text(f"Invoice state, by label (any case) or number: {states}", "Consegnata"),
        "documentType": _text("Document type (2.1.1.1 TipoDocumento), e.g. TD01", "TD01"),
        "username": _text(
            "Only the invoices of this account: the caller's own, or one that delegated the caller (Premium)",
            "demo-premium",
        ),
        # Searches, version 1 (decisions.md "Read endpoints")
        "startDate": _date_time("Created from this instant", "2026-11-23T00:00:00+01:00"),
        "endDate": _date_time("Created until this instant", "2026-11-24T23:59:59+01:00"),
        "countrySender": _text("Supplier's country code (1.2.1.1.1), e.g. IT", "IT"),
        "vatcodeSender": _text("Supplier's VAT number (1.2.1.1.2)", "01234560017"),
        "fiscalcodeSender": _text("Supplier's tax code (1.2.1.2)", "01234560017"),
        "countryReceiver": _text("Customer's country code (1.4.1.1.1), e.g. IT", "IT"),
        "vatcodeReceiver": _text("Customer's VAT number (1.4.1.1.2)", "09876540015"),
        "fiscalcodeReceiver": _text("Customer's tax code (1.4.1.2)", "09876540015"),
        # One invoice
        "id": _whole("The invoice's internal id (`id` of a search record)", 1, 0, MAX_ID),
        "invoiceId": _whole("The invoice's internal id (`id` of a search record)", 1, 0, MAX_ID),
        "filename": _text(invoice_name, "IT05555550028_00001.xml"),
        "invoiceFilename": _text(invoice_name, "IT05555550028_00001.xml"),
        "idSdi": _text("The Exchange System's identifier of the file (IdentificativoSdI)", "100000001"),
        "includeFile": _flag("Include the invoice file (`file`, base64)"),
        "includePdf": _flag("Include a PDF rendering (`pdfFile`, base64)"),
        "includeUnsignedFile": _flag("Include the XML without its signature (`unsignedFile`, base64)"),
        # Downloads, callbacks, events, communications
        "jobId": _text("The jobId answered by POST .../download", "687966094c0fc8bf1fabcbd5729ec496"),
        "callback_id": _text("The callback endpoint's id (`id` of POST /api/v2/callbacks)", "1"),
        "after": _text(
            "A cursor: the nextCursor of the previous page (digits); absent or blank: from the first event",
            "1042",
        ),
        "limit": _whole(
            f"How many events (default {settings.events_page_default})",
            settings.events_page_default,
            1,
            settings.events_page_max,
            settings.events_page_default,
        ),
        "requestId": _text("The requestId answered by POST /api/v2/comfin (§2.7)", "7f3a9c2e5b1d"),
        "Range": _text(
            "One byte range of the ZIP (RFC 9110): bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX; "
            "answered with 206, or 416 past the end; an unreadable range is ignored (200)",
            "bytes=0-1023",
        ),
        "Idempotency-Key": Param("", "6f1c2a7e-3b9d-4e5f-8a1b-2c3d4e5f6a7b"),
        # The SDI simulator (admin)
        "default": Param(
            "true: delete the default rule (the one for every other invoice)", True, blank_is_absent=False
        ),
    }
    return [(re.compile(pattern), names) for pattern, names in routes], shared


def document_parameters(document: dict[str, Any], settings: Settings) -> None:
    """Give every parameter of the document its type, format, required flag, description, example."""
    routes, shared = _table(settings)
    for path, item in document.get("paths", {}).items():
        own = [names for pattern, names in routes if pattern.fullmatch(path)]
        for operation in item.values():
            for parameter in operation.get("parameters", []):
                name = parameter["name"]
                found = next((names[name] for names in own if name in names), shared.get(name))
                if found is not None:
                    _apply(parameter, found)


def _apply(parameter: dict[str, Any], doc: Param) -> None:
    if doc.description and not parameter.get("description"):
        parameter["description"] = doc.description
    if doc.schema is not None:
        parameter["schema"] = dict(doc.schema)
    parameter["required"] = parameter.get("in") == "path" or doc.required or parameter.get("required", False)
    if parameter.get("in") == "query" and not parameter["required"] and doc.blank_is_absent:
        parameter["allowEmptyValue"] = True  # `?page=` is the same as no page
    parameter.setdefault("example", doc.example)
