"""GET /api/v2/events: ordered, stable cursors, catch-up after an outage, tenancy."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.callbacks.support import feed, register, run, status_event, usage_event, user
from tests.factories import bearer, make_basic, sign_in
from varco.accounts.models import DelegationStatus


def test_pages_follow_the_cursor_in_order(client, clock):
    account, token = user(client)
    ids = []
    for n in range(5):
        ids.append(status_event(account, f"IT05555550028_F{n:04d}.xml"))
        clock.advance(timedelta(seconds=1))
    first = feed(client, token, limit=2)
    assert [e["eventId"] for e in first["events"]] == ids[:2]
    assert first["hasMore"] is True and first["nextCursor"] == first["events"][-1]["cursor"]
    second = feed(client, token, after=first["nextCursor"], limit=2)
    third = feed(client, token, after=second["nextCursor"], limit=2)
    assert [e["eventId"] for e in second["events"] + third["events"]] == ids[2:]
    assert third["hasMore"] is False
    cursors = [int(e["cursor"]) for e in first["events"] + second["events"] + third["events"]]
    assert cursors == sorted(cursors)
    # nothing new: the same cursor comes back, ready for the next poll
    assert feed(client, token, after=third["nextCursor"]) == {
        "events": [],
        "nextCursor": third["nextCursor"],
        "hasMore": False,
    }
    # stable: asking again gives the same answer
    assert feed(client, token, after=first["nextCursor"], limit=2) == second


def test_a_client_that_was_down_catches_up_without_loss(client, receiver, queue, clock):
    account, token = user(client)
    register(client, token, receiver.url, receiver)
    before = status_event(account, "IT05555550028_C0000.xml")
    run(queue)
    [last] = receiver.accepted()
    cursor = last.json["cursor"]  # each body carries its feed cursor: where to resume

    receiver.answer = lambda _event_id: 503  # the client's server goes down
    missed = [status_event(account, f"IT05555550028_C{n:04d}.xml") for n in range(1, 4)]
    missed.append(usage_event(account, 12))
    run(queue)
    assert receiver.accepted_ids() == [before]

    # back up: it reads the feed from its last cursor and processes what it missed, in order
    caught = feed(client, token, after=cursor)
    assert [e["eventId"] for e in caught["events"]] == missed
    assert caught["events"][-1]["data"]["usedTransmissions"] == 12
    receiver.seen_ids.update(e["eventId"] for e in caught["events"])
    # the retries deliver the same events again (at-least-once): duplicates by Varco-Event-Id
    receiver.answer = None
    clock.advance(timedelta(minutes=1))
    run(queue)
    assert receiver.accepted_ids() == [before, *missed]
    assert receiver.seen_ids == {before, *missed}


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("after=abc", "after must be a cursor"),
        ("after=-1", "after must be a cursor"),
        ("after=1e3", "after must be a cursor"),
        ("limit=0", "limit must be an integer between 1 and 1000"),
        ("limit=1001", "limit must be an integer between 1 and 1000"),
        ("limit=ten", "limit must be an integer between 1 and 1000"),
    ],
)
def test_bad_parameters_are_400(client, query, fragment):
    _, token = user(client)
    response = client.get(f"/api/v2/events?{query}", headers=bearer(token))
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == "0002" and fragment in response.json()["errorDescription"]


def test_blank_parameters_mean_the_defaults(client):
    account, token = user(client)
    status_event(account, "IT05555550028_B0000.xml")
    assert len(feed(client, token, after="", limit=None)["events"]) == 1


def test_another_accounts_events_are_invisible_and_not_delivered(client, receiver, queue):
    owner, owner_token = user(client)
    other, other_token = user(client)
    register(client, other_token, receiver.url, receiver)
    status_event(owner, "IT05555550028_T0001.xml")
    usage_event(owner, 3)
    run(queue)
    assert feed(client, other_token)["events"] == []
    assert receiver.received == []
    assert len(feed(client, owner_token)["events"]) == 2


def test_a_delegate_sees_and_receives_the_events_of_taxpayers_that_delegated_it(client, receiver, queue):
    premium, premium_token = user(client)
    register(client, premium_token, receiver.url, receiver)
    active = make_basic(delegate_to=premium)
    pending = make_basic(delegate_to=premium, status=DelegationStatus.PENDING)
    shown = status_event(active, "IT05555550028_T0002.xml")
    status_event(pending, "IT05555550028_T0003.xml")
    own = usage_event(premium, 1)
    run(queue)
    seen = feed(client, premium_token)["events"]
    assert [e["eventId"] for e in seen] == [shown, own]
    assert seen[0]["account"]["username"] == active.username  # whose invoice it is
    assert receiver.accepted_ids() == [shown, own]
    # the taxpayer itself sees its own events, not its delegate's
    basic_token = sign_in(client, active.username)
    assert [e["eventId"] for e in feed(client, basic_token)["events"]] == [shown]
