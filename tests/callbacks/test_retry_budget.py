"""After a day of failures the endpoint is disabled, its waiting deliveries dropped, its owner told."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.callbacks.support import SignedIn, deliveries, feed, register, run, status_event, usage_event, user
from tests.factories import bearer
from varco.core.db import unit_of_work
from varco.mail import service as mail

START = datetime.fromisoformat("2026-11-23T09:00:00.000+01:00")


def _attempt_until_given_up(client, me: SignedIn, callback_id, clock, queue) -> list[timedelta]:
    """Follow nextAttemptAt until the delivery stops being pending; the offsets of every attempt."""
    offsets = []
    while True:
        rows = deliveries(client, me.token, callback_id)
        row = [d for d in rows if d["type"] == "updateInvoiceStatus"][-1]  # the oldest
        offsets.append(datetime.fromisoformat(row["lastAttemptAt"]) - START)
        if row["status"] != "PENDING":
            return offsets
        clock.set(datetime.fromisoformat(row["nextAttemptAt"]).astimezone(UTC))
        run(queue)


def test_a_day_of_failures_disables_the_endpoint_and_tells_the_owner(client, receiver, queue, clock):
    account, token = user(client)
    callback = register(client, token, receiver.url, receiver, events=["updateInvoiceStatus", "updateUsage"])
    receiver.fail(times=10_000)
    status_event(account, "IT05555550028_D0001.xml")
    run(queue)
    me = SignedIn(client, account)
    offsets = _attempt_until_given_up(client, me, callback["id"], clock, queue)
    token = me.token

    minutes = [int(o.total_seconds() // 60) for o in offsets]
    # 1, 2, 4 ... minutes apart, at most 4 hours apart, the last one a day after the first
    assert minutes == [0, 1, 3, 7, 15, 31, 63, 127, 255, 495, 735, 975, 1215, 1440]
    assert len(receiver.received) == 14
    given_up = next(
        d for d in deliveries(client, me.token, callback["id"]) if d["type"] == "updateInvoiceStatus"
    )
    assert (given_up["status"], given_up["attempts"]) == ("FAILED", 14)

    endpoint = client.get(f"/api/v2/callbacks/{callback['id']}", headers=bearer(token)).json()
    assert endpoint["status"] == "DISABLED"
    assert endpoint["disabledAt"] == "2026-11-24T09:00:00.000+01:00"
    assert "not delivered after 14 attempts in 24 hours: HTTP 503" in endpoint["disabledReason"]

    # the owner is told: an event in the feed (and to its other endpoints) and an e-mail
    notice = feed(client, token)["events"][-1]
    assert notice["type"] == "callbackDisabled"
    assert notice["data"]["callbackId"] == callback["id"] and notice["data"]["url"] == receiver.url
    with unit_of_work() as session:
        [message] = mail.messages_for(session, account.id)
    assert message.to_address == account.pec
    assert receiver.url in message.body and f"/api/v2/callbacks/{callback['id']}/enable" in message.body

    # disabled: new events are not sent (the feed still has them); a test event still is
    usage_event(account, 7)
    run(queue)
    assert len(receiver.received) == 14
    receiver.failures.clear()
    assert client.post(f"/api/v2/callbacks/{callback['id']}/test", headers=bearer(token)).status_code == 202
    run(queue)
    assert receiver.received[-1].event_type == "test" and receiver.received[-1].accepted

    # enabled again: events recorded from now on are delivered
    enabled = client.post(f"/api/v2/callbacks/{callback['id']}/enable", headers=bearer(token))
    assert enabled.status_code == 200
    assert (enabled.json()["status"], enabled.json()["disabledReason"]) == ("ACTIVE", None)
    fresh = usage_event(account, 8)
    run(queue)
    assert receiver.accepted_ids()[-1] == fresh


def test_giving_up_cancels_what_waits_for_the_endpoint(client, receiver, queue, clock):
    account, token = user(client)
    callback = register(client, token, receiver.url, receiver)
    receiver.fail(times=10_000)
    status_event(account, "IT05555550028_D0002.xml")
    run(queue)
    clock.advance(timedelta(hours=12))
    behind = status_event(account, "IT05555550028_D0002.xml", status=7)  # waits behind the first
    elsewhere = status_event(account, "IT05555550028_D0003.xml")  # its own lane, retrying too
    run(queue)
    me = SignedIn(client, account)
    _attempt_until_given_up(client, me, callback["id"], clock, queue)
    rows = {d["eventId"]: d for d in deliveries(client, me.token, callback["id"])}
    assert rows[behind]["status"] == "CANCELLED" and rows[behind]["attempts"] == 0
    assert rows[elsewhere]["status"] == "CANCELLED"
    assert behind not in [r.event_id for r in receiver.received]


def test_a_failing_endpoint_does_not_disable_a_healthy_one(client, receiver, queue, clock):
    account, token = user(client)
    broken = register(client, token, "http://127.0.0.1:9/unreachable")  # discard port: refused
    healthy = register(client, token, receiver.url, receiver, events=["callbackDisabled"])
    status_event(account, "IT05555550028_D0004.xml")
    run(queue)
    clock.advance(timedelta(days=1))
    run(queue)
    for _ in range(20):  # enough wake-ups for every attempt of the day
        clock.advance(timedelta(hours=4))
        run(queue)
    listed = client.get("/api/v2/callbacks", headers=bearer(SignedIn(client, account).token)).json()
    states = {c["id"]: c["status"] for c in listed["callbacks"]}
    assert states == {broken["id"]: "DISABLED", healthy["id"]: "ACTIVE"}
    [notice] = receiver.accepted()
    assert notice.event_type == "callbackDisabled" and notice.json["data"]["callbackId"] == broken["id"]
