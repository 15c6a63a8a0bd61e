"""Demo profile: accounts created on first start so a new user can sign in at once (README)."""

from __future__ import annotations

from varco.accounts import service
from varco.accounts.models import AccountKind, DelegationStatus
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.settings import Settings

DEMO_ACCOUNTS: tuple[service.NewAccount, ...] = (
    service.NewAccount(
        username="demo-premium",
        password="demo-premium-pw",
        description="Demo Premium S.r.l.",
        vat_code="01234560017",
        fiscal_code="01234560017",
        pec="demo-premium@pec.varco.example",
        tier=1,
    ),
    service.NewAccount(
        username="demo-basic",
        password="demo-basic-pw",
        kind=AccountKind.BASIC,
        description="Demo Cliente S.p.A.",
        vat_code="09876540015",
        fiscal_code="09876540015",
        pec="demo-basic@pec.varco.example",
    ),
    service.NewAccount(
        username="demo-admin",
        password="demo-admin-pw",
        description="varco operator",
        is_admin=True,
    ),
)


def seed_demo_accounts(session: UnitOfWork, settings: Settings, clock: Clock) -> list[tuple[str, str]]:
    """Create the demo accounts that do not exist yet; returns (username, password) of those created."""
    created: list[tuple[str, str]] = []
    for new in DEMO_ACCOUNTS:
        if service.find(session, new.username) is None:
            service.create_account(session, new, settings, clock)
            created.append((new.username, new.password))
    if ("demo-premium", "demo-premium-pw") in created:
        _demo_signer(session, clock)
    if ("demo-basic", "demo-basic-pw") in created:
        basic = service.get_by_username(session, "demo-basic")
        premium = service.get_by_username(session, "demo-premium")
        service.create_delegation(session, basic, premium, DelegationStatus.ACTIVE, clock)
    return created


def _demo_signer(session: UnitOfWork, clock: Clock) -> None:
    """Automatic signature works out of the box: credential `demo-credential`, domain `demo`."""
    from varco.invoices import signing
    from varco.invoices.demo_signer import DEMO_CREDENTIAL, DEMO_DOMAIN, make_demo_pkcs12

    premium = service.get_by_username(session, "demo-premium")
    p12 = make_demo_pkcs12("Demo Premium S.r.l.", clock.now())
    signing.set_identity(session, premium, DEMO_CREDENTIAL, DEMO_DOMAIN, p12, None, clock.now())
