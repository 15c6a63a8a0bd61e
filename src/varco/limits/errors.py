"""429 and 503 answers of the limiters, in the body shape the refused endpoint normally speaks."""

from __future__ import annotations

import re

from varco.core.errors import Shape, VarcoError

_UPLOAD = re.compile(r"/services/invoice/upload(Signed)?/?")

# Contract silent on a rate-limit code (§7.1 gives only the status): one code for both rate
# limits, the OAuth-style name on /auth/signin (docs/limits.md).
RATE_LIMIT_CODE = "0429"
RATE_LIMIT_OAUTH = "too_many_requests"
ANNUAL_LIMIT_CODE = "AR10"  # §7.4 "Maximum number of invoices and financial communications reached"


def shape_for(path: str) -> Shape:
    if path.startswith("/auth/signin"):
        return Shape.OAUTH
    if _UPLOAD.fullmatch(path):
        return Shape.UPLOAD  # §2.8: upload clients read uploadFileName/errorCode/errorDescription
    return Shape.CODED


class LimitError(VarcoError):
    """A limit refused the request; shape and code depend on the path it was refused on."""

    def __init__(
        self, message: str, *, path: str, code: str, status: int, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message, headers=headers)
        self.status = status  # type: ignore[misc]  # per instance, like UploadRefused
        self.shape = shape_for(path)  # type: ignore[misc]
        self.code = code  # type: ignore[misc]


def rate_limited(
    message: str, path: str, retry_after_s: int, headers: dict[str, str] | None = None
) -> LimitError:
    """§7.1/§8.1/§8.3: HTTP 429 saying which limit was hit and when to retry."""
    code = RATE_LIMIT_OAUTH if shape_for(path) is Shape.OAUTH else RATE_LIMIT_CODE
    return LimitError(
        f"{message}; retry in {retry_after_s} s",
        path=path,
        code=code,
        status=429,
        headers={**(headers or {}), "Retry-After": str(retry_after_s)},
    )


def annual_limit_reached(message: str, path: str, retry_after_s: int) -> LimitError:
    """§8.4: transmission refused while the account is locked."""
    return LimitError(
        message, path=path, code=ANNUAL_LIMIT_CODE, status=429, headers={"Retry-After": str(retry_after_s)}
    )


def limiter_unavailable(path: str) -> LimitError:
    """Redis unreachable: refuse rather than let traffic through unlimited (docs/limits.md)."""
    oauth = shape_for(path) is Shape.OAUTH
    return LimitError(
        "Service temporarily unavailable: the rate limiter cannot be reached; retry later",
        path=path,
        code="temporarily_unavailable" if oauth else "0095",  # RFC 6749 §4.1.2.1 / §7.2 0095
        status=503,
        headers={"Retry-After": "5"},
    )
