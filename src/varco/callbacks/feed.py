"""The event feed: an account's events after a cursor, oldest first (issue 12, docs/callbacks.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.callbacks import envelope
from varco.core.errors import BadRequest
from varco.core.numbers import MAX_ID, NotAWholeNumber, optional_whole_number
from varco.core.uow import UnitOfWork
from varco.events import service as events

MAX_CURSOR = MAX_ID  # event ids


class FeedInputError(BadRequest):
    """Invalid event feed parameter."""


@dataclass(frozen=True)
class FeedPage:
    items: list[dict[str, Any]]
    next_cursor: str
    has_more: bool


def parse_cursor(raw: str | None) -> int:
    """`after`: a cursor from an earlier page (today the event id); blank or absent: the beginning."""
    try:
        return optional_whole_number(raw, "after", 0, high=MAX_CURSOR)
    except NotAWholeNumber as exc:
        raise FeedInputError(f"after must be a cursor returned by this feed (digits): got {raw!r}") from exc


def parse_limit(raw: str | None, default: int, maximum: int) -> int:
    return optional_whole_number(raw, "limit", default, low=1, high=maximum)


def read(session: UnitOfWork, caller: Account, after: int, limit: int) -> FeedPage:
    """Events of the caller and of the taxpayers that delegated it (ACTIVE), as in searches."""
    visible = accounts.visible_account_ids(session, caller)
    found = events.page(session, visible, after, limit + 1)
    page = found[:limit]
    owners: dict[int, Account | None] = {}
    items = []
    for event in page:
        if event.account_id not in owners:
            owners[event.account_id] = accounts.get(session, event.account_id)
        items.append(envelope.envelope(event, owners[event.account_id]))
    next_cursor = str(page[-1].id) if page else str(after)
    return FeedPage(items=items, next_cursor=next_cursor, has_more=len(found) > limit)
