"""The audit trail as GET /api/v2/admin/audit answers it: a page like the invoice searches'."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from varco.audit.models import AuditEvent
from varco.search.dates import format_instant

EVENT_EXAMPLE = {
    "id": "42",
    "at": "2026-11-23T09:00:00.000+01:00",
    "kind": "auth.signin.failed",
    "actorAccountId": None,
    "actorUsername": None,
    "subjectAccountId": None,
    "subjectUsername": "demo-premium",
    "ip": "203.0.113.7",
    "requestId": "3f9a1c0d2b7e4a51",
    "details": {"channel": "api", "reason": "wrong_credentials"},
}


class AuditEventOut(BaseModel):
    """One event. Never a password, token, secret or credential (docs/operations.md)."""

    model_config = ConfigDict(json_schema_extra={"example": EVENT_EXAMPLE})

    id: str
    at: str = Field(description="When (ISO 8601, Italian offset)")
    kind: str = Field(description="What happened, e.g. auth.signin.failed (docs/operations.md)")
    actorAccountId: str | None = Field(description="The account that acted; null for cli, system or a client")
    actorUsername: str | None = Field(
        description="Its user name then; `cli` (the command line), `system` (varco itself), or null for a "
        "client not signed in"
    )
    subjectAccountId: str | None = Field(description="The account the event concerns")
    subjectUsername: str | None = Field(
        description="Its user name then; for a refused sign-in, the user name as typed"
    )
    ip: str | None = Field(description="The client's address (X-Forwarded-For only from trusted proxies)")
    requestId: str | None = Field(description="The request id (X-Request-ID, log lines)")
    details: dict[str, Any] = Field(description="What changed, by kind (docs/operations.md)")

    @classmethod
    def of(cls, event: AuditEvent) -> AuditEventOut:
        return cls(
            id=str(event.id),
            at=format_instant(event.at) or "",
            kind=event.kind,
            actorAccountId=_id(event.actor_account_id),
            actorUsername=event.actor_username,
            subjectAccountId=_id(event.subject_account_id),
            subjectUsername=event.subject_username,
            ip=event.ip,
            requestId=event.request_id,
            details=event.details,
        )


def _id(value: int | None) -> str | None:
    return None if value is None else str(value)


class AuditPage(BaseModel):
    content: list[AuditEventOut] = Field(description="Newest first")
    first: bool
    last: bool
    number: int = Field(description="The 1-based page asked for")
    numberOfElements: int
    size: int
    totalElements: int = Field(description="Number of events that match")
    totalPages: int
