"""SSRF safety in every profile: what a callback URL may be, the addresses it may reach, and the
same check again when a delivery is sent."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from tests.callbacks.support import deliveries, register, run, status_event, user
from tests.factories import bearer
from varco.callbacks import urls
from varco.settings import Settings

PRODUCTION = {
    "profile": "production",
    "secret_key": "p" * 40,
    "database_url": "postgresql+psycopg://h/db",
    "sdi_channel": "simulator",
}
EVERYTHING = json.dumps(["0.0.0.0/0", "::/0"])  # an operator listing every network

# Never a callback target, whatever VARCO_CALLBACK_ALLOWED_NETWORKS says: (url, reason named).
NEVER = [
    ("http://169.254.169.254/latest/meta-data", "link-local, the cloud metadata service"),
    ("http://[fd00:ec2::254]/latest/meta-data", "the cloud metadata service (AWS)"),
    ("http://2852039166/latest/meta-data", "denotes 169.254.169.254"),  # the metadata address as a number
    ("http://169.254.1.1/hook", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://0.0.0.0:8000/hook", "unspecified address"),
    ("http://0.1.2.3/hook", "unspecified address"),
    ("http://[::]:8000/hook", "unspecified address"),
    ("http://224.0.0.1/hook", "multicast"),
    ("http://[ff02::1]/hook", "multicast"),
    ("http://255.255.255.255/hook", "broadcast"),
    ("http://240.0.0.1/hook", "reserved"),
    ("http://192.0.2.10/hook", "reserved for documentation"),
    ("http://[::ffff:169.254.169.254]/hook", "IPv6 form of 169.254.169.254: link-local"),
    ("http://[64:ff9b::a9fe:a9fe]/hook", "NAT64 address of 169.254.169.254: link-local"),
    ("http://[64:ff9b:1::a9fe:a9fe]/hook", "NAT64 address of 169.254.169.254: link-local"),
    ("http://[2002:a9fe:a9fe::]/hook", "6to4 address of 169.254.169.254: link-local"),
    ("http://[2001:0:a9fe:a9fe::]/hook", "Teredo address of 169.254.169.254: link-local"),
    ("http://[64:ff9b::e000:1]/hook", "NAT64 address of 224.0.0.1: multicast"),
]

# Loopback and private: only inside an allowed network.
LISTED_ONLY = [
    ("http://127.0.0.1:8000/hook", "url host '127.0.0.1' resolves to 127.0.0.1, refused (loopback)"),
    ("http://127.9.9.9:8000/hook", "loopback"),
    ("http://localhost:8000/hook", "url host 'localhost' resolves to"),
    ("http://[::1]:8000/hook", "loopback"),
    ("http://2130706433:8000/hook", "denotes 127.0.0.1, refused (loopback)"),
    ("http://0x7f.1:8000/hook", "denotes 127.0.0.1, refused (loopback)"),
    ("http://0177.0.0.1:8000/hook", "denotes 127.0.0.1, refused (loopback)"),
    ("http://127.1:8000/hook", "denotes 127.0.0.1, refused (loopback)"),
    ("http://[::ffff:127.0.0.1]:8000/hook", "IPv6 form of 127.0.0.1: loopback"),
    ("http://[::ffff:7f00:1]:8000/hook", "IPv6 form of 127.0.0.1: loopback"),
    ("http://[64:ff9b::7f00:1]/hook", "NAT64 address of 127.0.0.1: loopback"),
    ("http://[2002:7f00:1::]/hook", "6to4 address of 127.0.0.1: loopback"),
    ("http://10.1.2.3/hook", "private network"),
    ("http://172.16.0.1/hook", "private network"),
    ("http://192.168.1.10/hook", "private network"),
    ("http://[::ffff:192.168.1.10]/hook", "IPv6 form of 192.168.1.10: private network"),
    ("http://100.64.0.1/hook", "shared address space"),
    ("http://[fd00::1]/hook", "unique local (private) network"),
    ("http://[2002:c0a8:10a::]/hook", "6to4 address of 192.168.1.10: private network"),
]

# Malformed or unsafe whatever the address: (url, reason named).
MALFORMED = [
    ("http://127.0.0.1:8000/h\r\nX-Injected: 1", "control characters or whitespace: U+000D at position 23"),
    ("http://127.0.0.1:8000/hook\nX-Injected: 1", "U+000A"),
    ("http://127.0.0.1:8000/ho ok", "U+0020"),
    ("http://127.0.0.1:8000/hook\x00", "U+0000"),
    ("http://127.0.0.1:8000/hook\x7f/x", "U+007F"),
    ("http://127.0.0.1\t:8000/hook", "U+0009"),
    ("http://127.0.0.1:8000/hook\u2028/x", "U+2028"),
    ("http://127.0.0.1:8000/hook\u202e/x", "U+202E"),  # right-to-left override
    ("http://127.0.0.1%0d%0a:8000/hook", "url host (percent-decoded) must not contain control characters"),
    ("http://127.0.0.1%2e:8000/hook", "must not be percent-encoded"),
    ("http://[fe80::1%25eth0]/hook", "must not be percent-encoded"),
    ("http://user@127.0.0.1:8000/hook", "must not carry credentials"),
    ("http://erp.example.com\\@127.0.0.1:8000/hook", "must not carry credentials"),
    ("http://b\u00fccher.example/hook", "xn-- (punycode) form"),
    ("http://erp_ex*mple.com/hook", "characters a host name cannot have"),
    ("http://1.2.3.4.5/hook", "neither a host name nor an IPv4 address"),
    ("http://08.0.0.1/hook", "neither a host name nor an IPv4 address"),
    ("gopher://127.0.0.1:8000/hook", "absolute http or https URL"),
    ("http:///hook", "url has no host"),
]


def refused(client, token, url: str) -> str:
    response = client.post("/api/v2/callbacks", json={"url": url}, headers=bearer(token))
    assert response.status_code == 400, response.text
    assert response.json()["errorCode"] == "0002"
    return response.json()["errorDescription"]


@pytest.mark.parametrize(("url", "reason"), NEVER)
def test_link_local_metadata_unspecified_multicast_and_reserved_are_never_allowed(
    client, configure, url, reason
):
    _, token = user(client)
    assert reason in refused(client, token, url)  # demo profile, default settings
    configure(callback_allowed_networks=EVERYTHING)
    message = refused(client, token, url)
    assert reason in message and "VARCO_CALLBACK_ALLOWED_NETWORKS cannot allow it" in message


@pytest.mark.parametrize(("url", "reason"), LISTED_ONLY)
def test_loopback_and_private_addresses_need_an_allowed_network(client, configure, url, reason):
    _, token = user(client)
    configure(callback_allowed_networks="[]")  # demo profile, no network allowed
    message = refused(client, token, url)
    assert reason in message and "callbacks must reach a public address" in message
    assert "VARCO_CALLBACK_ALLOWED_NETWORKS" in message


@pytest.mark.parametrize(("url", "reason"), MALFORMED)
def test_malformed_urls_are_refused_with_the_reason(client, url, reason):
    _, token = user(client)
    assert reason in refused(client, token, url)


def test_the_demo_profile_allows_loopback_by_default(client, receiver):
    _, token = user(client)
    assert register(client, token, receiver.url)["url"] == receiver.url
    assert register(client, token, "http://localhost:8000/hook")["status"] == "ACTIVE"
    assert register(client, token, "http://[::1]:8000/hook")["status"] == "ACTIVE"
    # ...as the plain address only, and never through a translator
    assert "write the address as 127.0.0.1" in refused(client, token, "http://2130706433:8000/hook")
    assert "NAT64 address of 127.0.0.1" in refused(client, token, "http://[64:ff9b::7f00:1]/hook")
    assert "private network" in refused(client, token, "http://10.1.2.3/hook")


def test_an_allowed_network_allows_exactly_that_network(client, configure):
    _, token = user(client)
    configure(callback_allowed_networks=json.dumps(["10.20.0.0/16", "169.254.0.0/16"]))
    assert register(client, token, "http://10.20.3.4/hook")["status"] == "ACTIVE"
    assert "private network" in refused(client, token, "http://10.21.3.4/hook")
    assert "loopback" in refused(client, token, "http://127.0.0.1:8000/hook")  # the list replaces the default
    assert "cloud metadata service" in refused(client, token, "http://169.254.169.254/hook")


def test_public_addresses_are_allowed_and_written_plainly(client):
    _, token = user(client)
    assert register(client, token, "http://93.184.216.34/hook")["status"] == "ACTIVE"
    assert register(client, token, "https://[2606:2800:220:1:248:1893:25c8:1946]/hook")["status"] == "ACTIVE"
    assert register(client, token, "http://[64:ff9b::5db8:d822]/hook")["status"] == "ACTIVE"  # NAT64, public
    message = refused(client, token, "http://1572395042/hook")
    assert message.startswith("url host '1572395042' denotes 93.184.216.34: write the address as 93.184.")


def test_an_invalid_allowed_network_stops_the_settings():
    with pytest.raises(ValidationError, match="callback_allowed_networks"):
        Settings(callback_allowed_networks=["10.0.0.1/8"])  # type: ignore[list-item]


def test_production_refuses_http_and_names_the_reason(client, configure):
    _, token = user(client)
    configure(**PRODUCTION)
    assert "169.254.169.254" in refused(client, token, "https://169.254.169.254/x")
    assert "loopback" in refused(client, token, "https://127.0.0.1/x")  # no allowed network by default
    assert "https only in production" in refused(client, token, "http://93.184.216.34/x")
    assert register(client, token, "https://93.184.216.34/x")["status"] == "ACTIVE"


def test_production_refuses_a_host_that_does_not_resolve_and_demo_checks_it_when_sending(
    client, configure, queue
):
    account, token = user(client)
    # Demo: the name may get its address later (offline demo); each delivery resolves and checks it.
    created = register(client, token, "https://no-such-host.invalid/hook")
    status_event(account, "IT05555550028_N0001.xml")
    run(queue)
    [row] = deliveries(client, token, created["id"])
    assert (row["status"], row["attempts"]) == ("PENDING", 1)
    assert row["lastError"].startswith("refused: url host 'no-such-host.invalid' cannot be resolved")
    configure(**PRODUCTION)
    assert "cannot be resolved" in refused(client, token, "https://no-such-host.invalid/hook")


def test_a_delivery_is_checked_again_when_it_is_sent(client, receiver, queue, clock, configure):
    """What DNS rebinding would do (a registered host now pointing at loopback), done by changing
    the allowed networks between registration and delivery: refused when sent, a failed attempt."""
    from datetime import timedelta

    account, token = user(client)
    created = register(client, token, receiver.url, receiver)  # allowed: the demo default
    configure(callback_allowed_networks="[]")
    status_event(account, "IT05555550028_N0002.xml")
    run(queue)
    assert receiver.received == []
    [row] = deliveries(client, token, created["id"])
    assert (row["status"], row["attempts"], row["lastStatusCode"]) == ("PENDING", 1, None)
    assert row["lastError"].startswith(
        "refused: url host '127.0.0.1' resolves to 127.0.0.1, refused (loopback)"
    )
    assert row["nextAttemptAt"] == "2026-11-23T09:01:00.000+01:00"  # the usual back-off
    configure(callback_allowed_networks=json.dumps(["127.0.0.0/8"]))
    clock.advance(timedelta(minutes=1))
    run(queue)
    [row] = deliveries(client, token, created["id"])
    assert (row["status"], row["attempts"], row["lastError"]) == ("DELIVERED", 2, None)


def test_a_delivery_connects_to_the_checked_address_with_the_name_as_host(client, receiver, queue):
    port = receiver.server.server_address[1]
    target = urls.resolve(f"http://localhost:{port}/pinned", Settings())
    if target.addresses != ("127.0.0.1",):
        pytest.skip("localhost does not resolve to 127.0.0.1 alone here")
    account, token = user(client)
    register(client, token, f"http://localhost:{port}/pinned", receiver)
    status_event(account, "IT05555550028_N0003.xml")
    run(queue)
    [got] = receiver.received
    assert (got.host, got.path, got.signature_ok) == (f"localhost:{port}", "/pinned", True)


def test_the_allowed_networks_default_depends_on_the_profile():
    assert [str(n) for n in urls.allowed_networks(Settings())] == ["127.0.0.0/8", "::1/128"]
    assert urls.allowed_networks(Settings(**PRODUCTION)) == ()  # type: ignore[arg-type]
    assert urls.allowed_networks(Settings(profile="demo", callback_allowed_networks=[])) == ()
