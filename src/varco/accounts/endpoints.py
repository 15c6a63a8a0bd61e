"""GET /auth/userInfo (§4.1); GET/PUT /api/v2/account/settings (varco's addition)."""

from __future__ import annotations

from fastapi import APIRouter

from varco.accounts import service
from varco.accounts.schemas import AccountSettings, AccountStatus, UsageStatus, UserInfo
from varco.auth.dependencies import Caller
from varco.core.deps import ClockDep, SessionDep

router = APIRouter(tags=["authentication"])


@router.get("/auth/userInfo", response_model=UserInfo, summary="Information on the signed-in user")
def user_info(caller: Caller, session: SessionDep, clock: ClockDep) -> UserInfo:
    return UserInfo(
        username=caller.username,
        pec=caller.pec,
        userDescription=caller.description,
        countryCode=caller.country_code,
        vatCode=caller.vat_code,
        fiscalCode=caller.fiscal_code,
        accountStatus=AccountStatus(
            # §2.3: true if the user is expired or suspended
            expired=caller.is_disabled or service.is_expired(caller, clock),
            expirationDate=caller.expires_on.isoformat(),
        ),
        usageStatus=UsageStatus(
            usedSpaceKB=service.used_space_kb(session, caller), maxSpaceKB=caller.max_space_kb
        ),
    )


@router.get(
    "/api/v2/account/settings",
    response_model=AccountSettings,
    tags=["account"],
    summary="The signed-in account's varco settings (not in the contract)",
)
def get_settings(caller: Caller) -> AccountSettings:
    return AccountSettings(preflightSdiControls=caller.preflight_sdi_controls)


@router.put(
    "/api/v2/account/settings",
    response_model=AccountSettings,
    tags=["account"],
    summary="Change the signed-in account's varco settings (not in the contract)",
)
def put_settings(body: AccountSettings, caller: Caller, session: SessionDep) -> AccountSettings:
    service.set_preflight_sdi_controls(session, caller.id, body.preflightSdiControls)
    return body
