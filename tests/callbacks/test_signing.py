"""Varco-Signature as documented, and the payload examples of the OpenAPI description."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.callbacks.receiver import check_signature
from tests.callbacks.support import register, run, status_event, usage_event, user
from tests.factories import bearer
from varco.callbacks import signing
from varco.callbacks.examples import EXAMPLES
from varco.invoices import service as invoices
from varco.invoices.models import Invoice

WHEN = datetime(2026, 11, 23, 8, 0, tzinfo=UTC)


def test_header_format_and_verification():
    body = b'{"eventId":"e1"}'
    header = signing.header("vcs_secret", WHEN, body)
    t, v1 = header.split(",")
    assert t == f"t={int(WHEN.timestamp())}" and v1.startswith("v1=") and len(v1) == 3 + 64
    assert check_signature("vcs_secret", header, body, WHEN.timestamp()) == (True, int(WHEN.timestamp()))
    assert signing.verify("vcs_secret", header, body, WHEN + timedelta(minutes=4))
    assert not signing.verify("vcs_secret", header, body + b" ", WHEN)  # tampered body
    assert not signing.verify("other", header, body, WHEN)  # wrong secret
    assert not signing.verify("vcs_secret", header, body, WHEN + timedelta(minutes=6))  # a replay
    assert not signing.verify("vcs_secret", "v1=abc", body, WHEN)


def test_examples_have_the_shape_of_real_bodies(client, receiver, queue):
    account, token = user(client)
    register(client, token, receiver.url, receiver)
    status_event(account, "IT05555550028_E0001.xml", statusDescription="Inviata", event="sent")
    usage_event(account, 1)
    run(queue)
    status, usage = (r.json for r in receiver.accepted())
    for real in (status, usage):
        example = EXAMPLES[real["type"]]
        assert example.keys() == real.keys()
        assert example["account"].keys() == real["account"].keys()
    assert EXAMPLES["updateUsage"]["data"].keys() == usage["data"].keys()
    recorded = invoices.status_payload(Invoice(state=3, filename="x.xml", sdi_errors=[]))
    assert EXAMPLES["updateInvoiceStatus"]["data"].keys() == recorded.keys()
    assert EXAMPLES["createInvoice"]["data"].keys() == {*recorded, "docType", "sender"}


def test_the_documented_worked_example():
    """docs/callbacks.md: secret, timestamp and body give this header (receivers can test with it)."""
    from varco.callbacks.examples import SIGNATURE_EXAMPLE

    body = b'{"eventId":"e1f2a3b4c5d64e7f8091a2b3c4d5e6f7","type":"test"}'
    when = datetime(2026, 11, 23, 8, 0, 5, tzinfo=UTC)
    assert signing.header("vcs_example-secret", when, body) == SIGNATURE_EXAMPLE


def test_the_published_examples_keep_every_field_of_the_real_bodies(client, receiver, queue):
    described = client.get("/openapi.json").json()["paths"]
    [delivered] = described["/api/v2/callbacks"]["post"]["callbacks"]["delivered_event"].values()
    examples = delivered["post"]["requestBody"]["content"]["application/json"]["examples"]
    assert {kind: example["value"] for kind, example in examples.items()} == EXAMPLES
    assert examples["test"]["value"]["cursor"] is None  # nulls are documented, not dropped
    assert examples["createInvoice"]["value"]["data"]["event"] is None
    feed = described["/api/v2/events"]["get"]["responses"]["200"]["content"]["application/json"]["examples"]
    assert {kind: example["value"]["events"][0] for kind, example in feed.items()} == {
        kind: value for kind, value in EXAMPLES.items() if kind != "test"
    }
    # a real test body has the published example's fields, null cursor included
    _, token = user(client)
    created = register(client, token, receiver.url, receiver)
    assert client.post(f"/api/v2/callbacks/{created['id']}/test", headers=bearer(token)).status_code == 202
    run(queue)
    [real] = receiver.accepted()
    assert real.json.keys() == examples["test"]["value"].keys() and real.json["cursor"] is None
    assert real.json["data"].keys() == examples["test"]["value"]["data"].keys()
