"""Signing secrets: shown once, stored encrypted (they must be readable to sign, so not hashed)."""

from __future__ import annotations

import base64
import os
import secrets as stdlib_secrets

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from varco.settings import Settings

PREFIX = "vcs_"  # recognisable in config files and secret scanners
VERSION = "v1:"


class SecretUnreadable(Exception):
    """The stored secret cannot be decrypted (VARCO_SECRET_KEY changed): rotate the secret."""


def generate() -> str:
    """A new secret: 256 random bits."""
    return PREFIX + stdlib_secrets.token_urlsafe(32)


def hint(secret: str) -> str:
    return secret[-4:]


def _key(settings: Settings) -> bytes:
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"varco callback secrets v1")
    return hkdf.derive(settings.secret_key.get_secret_value().encode())


def encrypt(secret: str, settings: Settings) -> str:
    nonce = os.urandom(12)
    sealed = AESGCM(_key(settings)).encrypt(nonce, secret.encode(), None)
    return VERSION + base64.urlsafe_b64encode(nonce + sealed).decode()


def decrypt(stored: str, settings: Settings) -> str:
    if not stored.startswith(VERSION):
        raise SecretUnreadable("unknown secret format")
    raw = base64.urlsafe_b64decode(stored[len(VERSION) :])
    try:
        return AESGCM(_key(settings)).decrypt(raw[:12], raw[12:], None).decode()
    except InvalidTag:
        raise SecretUnreadable(
            "the callback secret cannot be decrypted with the current VARCO_SECRET_KEY; rotate it"
        ) from None
