"""Request and response bodies of the SDI endpoints (contract names as field names)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from varco.core.fields import LenientBool, OptionalWholeNumber, numbers_as_text


def _blank_to_none(value: Any) -> Any:
    # decisions.md: real clients send empty strings for unused optional fields.
    if isinstance(value, str) and not value.strip():
        return None
    return value.strip() if isinstance(value, str) else value


class _Tolerant(BaseModel):
    model_config = ConfigDict(extra="ignore", coerce_numbers_to_str=True, json_schema_extra=numbers_as_text)


class EsitoIn(_Tolerant):
    filename: str | None = None
    sdiId: str | None = None
    esito: str | None = None
    numero: str | None = None
    anno: OptionalWholeNumber = None
    posizione: OptionalWholeNumber = None
    descrizione: str | None = None
    messageId: str | None = None

    _blank = field_validator("*", mode="before")(_blank_to_none)


class EsitoOut(BaseModel):
    errorCode: str
    errorDescription: str
    esitoFileName: str | None


class EsitoStatus(BaseModel):
    filename: str
    sdiId: str
    esito: str
    numero: str | None
    anno: int | None
    posizione: int | None
    descrizione: str | None
    messageId: str | None
    esitoFileName: str
    status: str  # SENT | ACCEPTED | REJECTED


class ScenarioIn(_Tolerant):
    recipientCode: str | None = None
    filename: str | None = None
    default: LenientBool = False
    outcome: str | None = None  # RC MC NS AT NE-EC01 NE-EC02 DT
    esitoOutcome: str | None = None  # ACCEPT | SE
    delay: str | None = None  # e.g. 30s, 2h

    _blank = field_validator("recipientCode", "filename", "outcome", "esitoOutcome", "delay", mode="before")(
        _blank_to_none
    )


class ScenarioOut(BaseModel):
    kind: str
    value: str
    outcome: str | None
    esitoOutcome: str | None
    delay: str


class ScenarioList(BaseModel):
    simulatedNow: str
    offset: str
    rules: list[ScenarioOut]


class AdvanceIn(_Tolerant):
    duration: str


class AdvanceOut(BaseModel):
    simulatedNow: str
    offset: str
    due: int  # simulated files with a step that became due (their jobs are queued)


class InjectIn(_Tolerant):
    file: str  # base64 of the invoice file
    filename: str | None = None

    _blank = field_validator("filename", mode="before")(_blank_to_none)


class SdiError(BaseModel):
    code: str
    description: str


class InjectOut(BaseModel):
    sdiId: str | None
    filename: str
    status: str  # DELIVERED | UNROUTABLE | DISCARDED
    username: str | None = None
    invoiceId: int | None = None
    unroutableId: int | None = None
    errors: list[SdiError] = []


class UnroutableOut(BaseModel):
    id: int
    sdiId: str
    filename: str
    reason: str
    receivedAt: str
    invoiceId: int | None
