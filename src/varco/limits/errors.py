"""429 and 503 answers of the limiters (the body's shape is the refused route's, core/errors.py)."""

from __future__ import annotations

from varco.core import metrics
from varco.core.errors import VarcoError

# Contract silent on a rate-limit code (§7.1 gives only the status): one code for both rate
# limits, `too_many_requests` in the OAuth body of /auth/signin (docs/limits.md).
RATE_LIMIT_CODE = "0429"
ANNUAL_LIMIT_CODE = "AR10"  # §7.4 "Maximum number of invoices and financial communications reached"


class LimitError(VarcoError):
    """A limit refused the request (429, or 503 when the limiter cannot decide)."""


def rate_limited(
    message: str, retry_after_s: int, headers: dict[str, str] | None = None, *, limit: str
) -> LimitError:
    """§7.1/§8.1/§8.3: HTTP 429 saying which limit was hit and when to retry; counted by `limit`
    (/metrics: `ip:<family>`, `tier`, `credentials`)."""
    metrics.count(metrics.RATE_LIMIT_REFUSALS, limit)
    return LimitError(
        f"{message}; retry in {retry_after_s} s",
        code=RATE_LIMIT_CODE,
        status=429,
        headers={**(headers or {}), "Retry-After": str(retry_after_s)},
    )


def annual_limit_reached(message: str, retry_after_s: int) -> LimitError:
    """§8.4: transmission refused while the account is locked."""
    metrics.count(metrics.RATE_LIMIT_REFUSALS, "annual")
    return LimitError(
        message, code=ANNUAL_LIMIT_CODE, status=429, headers={"Retry-After": str(retry_after_s)}
    )


def limiter_unavailable() -> LimitError:
    """Redis unreachable: refuse rather than let traffic through unlimited (docs/limits.md)."""
    return LimitError(
        "Service temporarily unavailable: the rate limiter cannot be reached; retry later",
        code="0095",  # §7.2 0095; RFC 6749 temporarily_unavailable in the OAuth body
        status=503,
        headers={"Retry-After": "5"},
    )
