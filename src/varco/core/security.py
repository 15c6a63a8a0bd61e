"""Secrets: argon2 passwords, random tokens stored as SHA-256 digests."""

from __future__ import annotations

import hashlib
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

_hasher = PasswordHasher()
# Verified against unknown usernames so that timing does not reveal which accounts exist.
_DUMMY_HASH = _hasher.hash("varco-dummy-password")


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    try:
        return _hasher.verify(password_hash or _DUMMY_HASH, password) and password_hash is not None
    except (VerificationError, InvalidHashError):
        return False


def new_token() -> str:
    """An opaque bearer token (256 bits)."""
    return secrets.token_urlsafe(32)


def token_digest(token: str) -> str:
    """Tokens are high-entropy, so a fast digest is enough to store them safely."""
    return hashlib.sha256(token.encode()).hexdigest()
