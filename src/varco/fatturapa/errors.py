"""The one exception of the library: a refusal that carries its `Finding`."""

from __future__ import annotations

from varco.fatturapa.findings import Finding


class FatturaPAError(Exception):
    """Raised where a check cannot go on (bad base64, unreadable envelope); `.finding` says why."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.upload_text)
        self.finding = finding


def refuse(code: str, message: str, hint: str, *, xpath: str | None = None) -> FatturaPAError:
    """A synchronous refusal, ready to raise."""
    return FatturaPAError(Finding(code=code, message=message, stage="sync", xpath=xpath, hint=hint))
