"""One example of each payload, for the OpenAPI description (and kept honest by a test)."""

from __future__ import annotations

from typing import Any

ACCOUNT = {
    "username": "acme",
    "description": "ACME S.r.l.",
    "countryCode": "IT",
    "vatCode": "01234560017",
    "fiscalCode": "01234560017",
}

EXAMPLES: dict[str, dict[str, Any]] = {
    "updateInvoiceStatus": {
        "eventId": "5f0c6a1de2b54e0f9a3c1b7d8e9f0a12",
        "type": "updateInvoiceStatus",
        "cursor": "1042",
        "occurredAt": "2026-11-23T09:14:05.120+01:00",
        "account": ACCOUNT,
        "data": {
            "invoiceId": 318,
            "filename": "IT05555550028_0A1B2.xml",
            "idSdi": "4000012345",
            "status": 7,
            "statusDescription": "Consegnata",
            "event": "RC",
            "notificationType": "RC",
            "notificationFilename": "IT05555550028_0A1B2_RC_001.xml",
            "sdiErrors": [],
        },
    },
    "createInvoice": {
        "eventId": "0b9d7c3e8f2a4b6c9d1e2f3a4b5c6d7e",
        "type": "createInvoice",
        "cursor": "1043",
        "occurredAt": "2026-11-23T09:20:00.000+01:00",
        "account": ACCOUNT,
        "data": {
            "invoiceId": 319,
            "filename": "IT09876540015_00012.xml",
            "idSdi": "4000012399",
            "status": 11,
            "statusDescription": "Ricevuta",
            "event": None,
            "notificationType": "MT",
            "notificationFilename": "IT09876540015_00012_MT_001.xml",
            "sdiErrors": [],
            "docType": "in",
            "sender": {
                "description": "Fornitore S.p.A.",
                "countryCode": "IT",
                "vatCode": "09876540015",
                "fiscalCode": "09876540015",
            },
        },
    },
    "updateUsage": {
        "eventId": "7a1b2c3d4e5f40718293a4b5c6d7e8f9",
        "type": "updateUsage",
        "cursor": "1044",
        "occurredAt": "2026-11-23T09:21:30.500+01:00",
        "account": ACCOUNT,
        "data": {"username": "acme", "year": 2026, "usedTransmissions": 128},
    },
    "callbackDisabled": {
        "eventId": "c4d5e6f708194a2b8c3d4e5f60718293",
        "type": "callbackDisabled",
        "cursor": "1045",
        "occurredAt": "2026-11-24T09:30:00.000+01:00",
        "account": ACCOUNT,
        "data": {
            "callbackId": "7",
            "url": "https://erp.acme.example/varco-events",
            "reason": "event 5f0c6a1d... not delivered after 14 attempts in 24 hours: HTTP 503: busy",
            "disabledAt": "2026-11-24T09:30:00.000+01:00",
            "cancelledDeliveries": 3,
        },
    },
    "test": {
        "eventId": "e1f2a3b4c5d64e7f8091a2b3c4d5e6f7",
        "type": "test",
        "cursor": None,
        "occurredAt": "2026-11-23T09:00:00.000+01:00",
        "account": ACCOUNT,
        "data": {"callbackId": "7", "message": "Test event from varco: your endpoint works."},
    },
}

# docs/callbacks.md worked example: secret "vcs_example-secret", the body given there
SIGNATURE_EXAMPLE = "t=1795420805,v1=1a3a6e2679d419cb30c9d015871cd71df7db7ce01cc61fab678f77329a273062"

DELIVERY_DOC = f"""
Each event is POSTed as JSON to the endpoint with these headers:

- `Varco-Signature: {SIGNATURE_EXAMPLE}` — `t` is the send time (Unix seconds), `v1` the hex
  HMAC-SHA256 of `"<t>." + raw body` keyed with the endpoint's secret. Refuse a `t` more than 5
  minutes from your clock (replays) and compare `v1` in constant time.
- `Varco-Event-Id` — the `eventId`: de-duplicate on it (delivery is at-least-once).
- `Varco-Event-Type` — the `type`.

Any 2xx answer within the timeout (VARCO_CALLBACK_TIMEOUT_SECONDS, 10 by default) is success;
anything else (redirects too: they are not followed) is retried with exponential back-off (1, 2,
4 ... minutes, at most 4 hours apart) for a day, then the endpoint is disabled and its owner
notified (event `callbackDisabled` and an e-mail). Events of one invoice arrive in order: the next
waits until the previous one is delivered or given up. Every event is also in `GET
/api/v2/events`. Body `type`s: `createInvoice` (a received invoice arrived),
`updateInvoiceStatus` (a sent invoice changed state), `updateUsage` (usage counter changed),
`callbackDisabled` (one of your endpoints was disabled), and `test`. Examples: the OpenAPI
callback of `POST /api/v2/callbacks` and the 200 answer of `GET /api/v2/events`.
"""
