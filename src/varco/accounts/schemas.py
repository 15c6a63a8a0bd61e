"""§2.3 User information."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


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
