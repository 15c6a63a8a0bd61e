"""§2.3 User information."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AccountStatus(BaseModel):
    expired: bool
    expirationDate: str  # yyyy-MM-dd


class UsageStatus(BaseModel):
    usedSpaceKB: int
    maxSpaceKB: int


class UserInfo(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "example": {
                "username": "demo-premium",
                "pec": "demo-premium@pec.example.it",
                "userDescription": "Demo Premium S.r.l.",
                "countryCode": "IT",
                "vatCode": "01234560017",
                "fiscalCode": "01234560017",
                "accountStatus": {"expired": False, "expirationDate": "2027-11-23"},
                "usageStatus": {"usedSpaceKB": 0, "maxSpaceKB": 1048576},
            }
        }
    )

    username: str
    pec: str | None
    userDescription: str
    countryCode: str
    vatCode: str | None
    fiscalCode: str | None
    accountStatus: AccountStatus
    usageStatus: UsageStatus


class AccountSettings(BaseModel):
    """varco's account settings (not in the contract; docs/sdi-controls.md)."""

    model_config = ConfigDict(
        extra="forbid", strict=True, json_schema_extra={"example": {"preflightSdiControls": True}}
    )

    preflightSdiControls: bool = Field(
        description="Uploads answer 0096 with the Exchange System's control that would refuse the file "
        "(00423, 00404, ...) instead of letting the SDI refuse it later with an NS"
    )
