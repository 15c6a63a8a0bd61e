"""The SDICoop face's configuration file (JSON): its TLS, and the intermediaries it knows.

The real SDI knows an intermediary from its accreditation: the certificate it calls with, its
transmitter ids (the first part of every file name it sends), the recipient codes whose invoices
it takes, and its two endpoints. Paths are relative to the file's directory.
"""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ServerTls(_Strict):
    certificate: Path  # the SDI's server certificate (PEM)
    key: Path
    client_ca: Path  # the CA that issued the intermediaries' client certificates


class ClientTls(_Strict):
    certificate: Path  # the SDI's client certificate, for calling intermediaries
    key: Path
    ca_bundle: Path  # the CA of the intermediaries' server certificates


class Intermediary(_Strict):
    name: str
    transmitter_ids: list[str] = Field(min_length=1)  # e.g. IT01234567890
    recipient_codes: list[str] = Field(default_factory=list)  # 6 (PA office) or 7 characters
    trasmissione_fatture_url: str  # https://host:port/sdicoop/TrasmissioneFatture
    ricezione_fatture_url: str  # https://host:port/sdicoop/RicezioneFatture
    mtom: bool = True  # the real SDI sends files as MTOM attachments

    @field_validator("recipient_codes")
    @classmethod
    def _codes(cls, codes: list[str]) -> list[str]:
        for code in codes:
            if len(code) not in (6, 7) or not code.isalnum():
                raise ValueError(f"recipient code {code!r}: 6 or 7 letters and digits")
        return [code.upper() for code in codes]


class SimConfig(_Strict):
    server: ServerTls
    client: ClientTls
    intermediaries: list[Intermediary]
    timeout_seconds: float = 30

    def by_transmitter(self, transmitter_id: str) -> Intermediary | None:
        return next((i for i in self.intermediaries if transmitter_id in i.transmitter_ids), None)

    def by_recipient_code(self, code: str | None) -> Intermediary | None:
        code = (code or "").upper()
        return next((i for i in self.intermediaries if code in i.recipient_codes), None)

    def by_name(self, name: str) -> Intermediary | None:
        return next((i for i in self.intermediaries if i.name == name), None)


class ConfigError(Exception):
    pass


def load(path: Path) -> SimConfig:
    """Read and check the file; paths inside it are resolved against its directory."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: {exc}") from None
    try:
        config = SimConfig.model_validate(raw)
    except ValidationError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    base = path.resolve().parent

    def resolved(tls: BaseModel) -> dict[str, Path]:
        values = {name: base / value for name, value in tls.model_dump().items()}
        for name, value in values.items():
            if not value.is_file():
                raise ConfigError(f"{path}: {type(tls).__name__.lower()} {name}: no file at {value}")
        return values

    server = ServerTls(**resolved(config.server))
    client = ClientTls(**resolved(config.client))
    return config.model_copy(update={"server": server, "client": client})


def transmitter_of(filename: str) -> str:
    """IT01234567890_00001.xml -> IT01234567890 (the SDI's file names: sender id, progressive)."""
    return filename.split("_", 1)[0].upper()
