"""§4.1/§8.1 page rules: `size` 1–100 (default 10), `page` 1-based up to `totalPages` (default 1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from varco.core.errors import BadRequest
from varco.core.numbers import MAX_BIGINT, optional_whole_number


class PageOutOfRange(BadRequest):
    """The page asked for does not exist."""


@dataclass(frozen=True)
class PageRequest:
    page: int
    size: int

    @property
    def offset(self) -> int:
        return (self.page - 1) * self.size


def page_request(page: str | None, size: str | None, default_size: int, max_size: int) -> PageRequest:
    return PageRequest(
        page=optional_whole_number(page, "page", 1, low=1, high=MAX_BIGINT // max_size),
        size=optional_whole_number(size, "size", default_size, low=1, high=max_size),
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
