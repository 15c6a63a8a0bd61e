"""Automatic signature (§4.3 `credential` + `domain`): CAdES-BES with pyHanko.

The account's PKCS#12 is stored encrypted *with the credential itself*, so the credential is
never stored: a wrong credential simply cannot open the key.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime

from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, pkcs12
from pyhanko.sign import signers
from sqlalchemy import select

from varco.accounts.models import Account
from varco.core.coroutines import run_sync
from varco.core.errors import VarcoError
from varco.core.uow import UnitOfWork
from varco.invoices.models import SigningIdentity


class SigningFailed(VarcoError):
    """§7.2 0012: the automatic-signature credentials are wrong."""

    status, code = 200, "0012"


@dataclass(frozen=True)
class Identity:
    signer: signers.SimpleSigner


def set_identity(
    session: UnitOfWork,
    account: Account,
    credential: str,
    domain: str,
    pkcs12_data: bytes,
    pkcs12_password: str | None,
    now: datetime,
) -> SigningIdentity:
    """Configure (or replace) the account's signing identity for `domain`."""
    if not credential or not domain:
        raise SigningFailed("credential and domain must not be empty")
    try:
        key, cert, extra = pkcs12.load_key_and_certificates(
            pkcs12_data, pkcs12_password.encode() if pkcs12_password else None
        )
    except ValueError as exc:
        raise SigningFailed(f"cannot open the PKCS#12 file: {exc}") from exc
    if key is None or cert is None:
        raise SigningFailed("the PKCS#12 file must hold a private key and its certificate")
    sealed = pkcs12.serialize_key_and_certificates(
        domain.encode(),
        key,
        cert,
        extra,
        BestAvailableEncryption(_secret(credential, domain)),  # type: ignore[arg-type]
    )
    existing = session.scalar(
        select(SigningIdentity).where(
            SigningIdentity.account_id == account.id, SigningIdentity.domain == domain
        )
    )
    if existing is None:
        existing = SigningIdentity(account_id=account.id, domain=domain, created_at=now)
        session.add(existing)
    existing.pkcs12 = sealed
    existing.subject = cert.subject.rfc4514_string()[:255]
    session.flush()
    return existing


def identity_for(
    session: UnitOfWork, account: Account, credential: str | None, domain: str | None
) -> Identity:
    """Open the account's identity for `domain` with `credential`, or refuse with 0012."""
    if not credential or not domain:
        raise SigningFailed("Automatic signature needs both credential and domain (or neither)")
    row = session.scalar(
        select(SigningIdentity).where(
            SigningIdentity.account_id == account.id, SigningIdentity.domain == domain
        )
    )
    if row is None:
        raise SigningFailed(f"Authentication failure: no automatic-signature identity for domain {domain!r}")
    try:
        signer = signers.SimpleSigner.load_pkcs12_data(
            row.pkcs12, other_certs=[], passphrase=_secret(credential, domain)
        )
    except Exception as exc:  # pyHanko raises several types for a wrong passphrase
        raise SigningFailed("Authentication failure: wrong automatic-signature credential") from exc
    if signer is None:
        raise SigningFailed("Authentication failure: wrong automatic-signature credential")
    return Identity(signer)


def sign_cades(content: bytes, identity: Identity) -> bytes:
    """An attached CAdES-BES signature (DER `.p7m`)."""
    signed = run_sync(
        identity.signer.async_sign_general_data(content, "sha256", detached=False, use_cades=True)
    )
    return signed.dump()


def _secret(credential: str, domain: str) -> bytes:
    # Bind the credential to its domain; PKCS#12 then stretches it with its own KDF.
    return hashlib.sha256(f"{domain}\x00{credential}".encode()).hexdigest().encode()
