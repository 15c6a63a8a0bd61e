"""§2.1 Token response."""

from __future__ import annotations

from datetime import datetime
from email.utils import format_datetime

from pydantic import BaseModel, ConfigDict, Field

from varco.auth.service import IssuedToken


def rfc1123(value: datetime) -> str:
    """`Sun, 18 Nov 2018 07:23:39 GMT` (decisions.md)."""
    return format_datetime(value.replace(microsecond=0), usegmt=True)


class TokenResponse(BaseModel):
    model_config = ConfigDict(
        populate_by_name=True,
        json_schema_extra={
            "example": {
                "access_token": "q1Yb2wJm0y3m0XOwMhYc6m7hM0f8m1b0kY0wQq1m1jA",
                "token_type": "bearer",
                "expires_in": 1800,
                "refresh_token": "h3Jc9yJm0y3m0XOwMhYc6m7hM0f8m1b0kY0wQq1m1jB",
                "userName": "demo-premium",
                "as:client_id": "",
                ".issued": "Mon, 23 Nov 2026 08:00:00 GMT",
                ".expires": "Mon, 23 Nov 2026 08:30:00 GMT",
            }
        },
    )

    access_token: str
    token_type: str = "bearer"
    expires_in: int = Field(description="Seconds of validity remaining (1800 at issue)")
    refresh_token: str
    userName: str
    client_id: str = Field(alias="as:client_id")
    issued: str = Field(alias=".issued")
    expires: str = Field(alias=".expires")

    @classmethod
    def of(cls, issued: IssuedToken) -> TokenResponse:
        record = issued.record
        # §2.1: seconds of validity remaining, 1800 at issue (the response is built at issue time)
        remaining = round((record.expires_at - record.issued_at).total_seconds())
        return cls(
            access_token=issued.access_token,
            expires_in=remaining,
            refresh_token=issued.refresh_token,
            userName=issued.username,
            client_id=record.client_id,
            issued=rfc1123(record.issued_at),
            expires=rfc1123(record.expires_at),
        )


class OAuthErrorBody(BaseModel):
    """§2.2 authentication error body."""

    error: str = Field(examples=["invalid_grant"])
    error_description: str = Field(examples=["The user name or password is incorrect."])
