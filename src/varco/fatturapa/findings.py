"""What a check reports: one `Finding` per broken rule."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Stage = Literal["sync", "async", "sdi"]  # sdi: the Exchange System's own controls (sdi_controls)


@dataclass(frozen=True, slots=True)
class Finding:
    """One broken rule: contract code, specific message, where, and how to fix it."""

    code: str  # contract code: "0092", "0094", "00313", "00400", "FATRSM302", ...
    message: str  # the contract's text made specific (which value, which line)
    stage: Stage
    xpath: str | None = None  # offending element, e.g. /FatturaElettronica/FatturaElettronicaBody[2]/...
    body: int | None = None  # 1-based index of the FatturaElettronicaBody, None for header-level
    hint: str = ""  # one-line fix hint

    @property
    def upload_text(self) -> str:
        """How an upload reports it under 0096 / FATRSM212: `code - message`."""
        return f"{self.code} - {self.message}"

    def as_dict(self) -> dict[str, object]:
        return asdict(self)
