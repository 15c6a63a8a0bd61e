"""§4.1/§8.1 page rules: `size` 1–100 (default 10), `page` 1-based up to `totalPages` (default 1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from varco.core.errors import BadRequest


class PageOutOfRange(BadRequest):
    """The page asked for does not exist."""


@dataclass(frozen=True)
class PageRequest:
    page: int
    size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size


def _blank(raw: str | None) -> bool:
    # Shared decisions: clients send empty strings for unused optional fields.
    return raw is None or not raw.strip()


def parse_int(name: str, raw: str | None, default: int, low: int, high: int | None = None) -> int:
    """An integer query value within bounds, or a 400 that names the parameter and the range."""
    if _blank(raw):
        return default
    assert raw is not None
    bounds = f"between {low} and {high}" if high is not None else f"{low} or more"
    try:
        value = int(raw.strip())
    except ValueError:
        raise BadRequest(f"{name} must be an integer {bounds}: got {raw!r}") from None
    if value < low or (high is not None and value > high):
        raise BadRequest(f"{name} must be an integer {bounds}: got {value}")
    return value


def page_request(page: str | None, size: str | None, default_size: int, max_size: int) -> PageRequest:
    return PageRequest(
        page=parse_int("page", page, 1, 1),
        size=parse_int("size", size, default_size, 1, max_size),
    )


def total_pages(total: int, size: int) -> int:
    return math.ceil(total / size)


def check_in_range(request: PageRequest, pages: int) -> None:
    """`page` goes up to `totalPages`; with no results only page 1 exists (an empty page)."""
    if request.page > max(pages, 1):
        if pages == 0:
            raise PageOutOfRange(f"page {request.page} is out of range: nothing was found, ask for page 1")
        raise PageOutOfRange(
            f"page {request.page} is out of range: there {'is' if pages == 1 else 'are'} {pages} "
            f"page{'' if pages == 1 else 's'} of {request.size}"
        )
