"""§7.4 communication request codes as errors: one `VarcoError` per refusal, status by meaning."""

from __future__ import annotations

from varco.core.errors import VarcoError

# §7.4 texts, used as the `error` description of v1 and as the start of every message.
RESULT_TEXT: dict[str, str] = {
    "SF01": "Being processed",
    "SF02": "Processed",
    "SF03": "Error",
    "AR01": "Attached file empty or missing",
    "AR02": "Access denied",
    "AR03": "Incorrect file",
    "AR04": "Request ID missing",
    "AR05": "Remote signature missing",
    "AR06": "Transmission to the Exchange System not executed",
    "AR07": "Exchange System result response not received",
    "AR08": "Incorrect signature",
    "AR09": "Third-party transmission not permitted",
    "AR10": "Maximum number of invoices and financial communications reached",
    "AR20": "Incorrect communication type",
    "AR21": "File not signed",
    "AR99": "Generic error",
}
# docs/comfin.md: file and input problems are 400, access 403, quota 429 (§7.1).
_STATUS = {"AR02": 403, "AR09": 403, "AR10": 429, "AR99": 500}


class ComfinRefused(VarcoError):
    """A communication request refused with a §7.4 code."""

    def __init__(
        self, code: str, detail: str = "", *, status: int | None = None, headers: dict[str, str] | None = None
    ) -> None:
        text = RESULT_TEXT.get(code, "Error")
        message = f"{text}: {detail}" if detail else text
        super().__init__(message, code=code, status=status or _STATUS.get(code, 400), headers=headers)
