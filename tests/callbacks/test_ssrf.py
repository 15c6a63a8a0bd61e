"""SSRF safety: production refuses http and URLs resolving to non-public addresses; demo allows them."""

from __future__ import annotations

import pytest

from tests.callbacks.support import register, user
from tests.factories import bearer
from varco.callbacks import sender, urls
from varco.callbacks.sender import Attempt
from varco.core.clock import current_clock
from varco.settings import Settings

PRODUCTION = {"profile": "production", "secret_key": "p" * 40, "database_url": "postgresql+psycopg://h/db"}


def production(**overrides: object) -> Settings:
    return Settings(**{**PRODUCTION, **overrides})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url",
    [
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://10.1.2.3/hook",
        "https://172.16.0.1/hook",
        "https://192.168.1.10/hook",
        "https://169.254.169.254/latest/meta-data",  # cloud metadata: link-local
        "https://100.64.0.1/hook",  # shared address space
        "https://0.0.0.0/hook",
        "https://[::1]/hook",
        "https://[fe80::1]/hook",
        "https://[fd00::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://224.0.0.1/hook",
    ],
)
def test_production_refuses_private_loopback_and_link_local_addresses(url):
    with pytest.raises(urls.CallbackUrlRefused, match="public address"):
        urls.check_url(url, production())


def test_production_accepts_public_https_and_connects_to_the_checked_address():
    assert urls.check_url("https://93.184.216.34/hook", production()) == "https://93.184.216.34/hook"
    target = urls.resolve("https://93.184.216.34:8443/hook", production())
    assert (target.address, target.port) == ("93.184.216.34", 8443)


def test_production_refuses_http():
    with pytest.raises(urls.CallbackUrlRefused, match="https only in production"):
        urls.check_url("http://93.184.216.34/hook", production())


def test_production_refuses_hosts_that_do_not_resolve():
    with pytest.raises(urls.CallbackUrlRefused, match="cannot be resolved"):
        urls.check_url("https://no-such-host.invalid/hook", production())


def test_operators_can_allow_an_internal_network():
    settings = production(callback_allowed_networks=["10.20.0.0/16"])
    assert urls.check_url("https://10.20.3.4/hook", settings)
    with pytest.raises(urls.CallbackUrlRefused):
        urls.check_url("https://10.21.3.4/hook", settings)


def test_demo_allows_http_and_localhost():
    demo = Settings(profile="demo")
    assert urls.check_url("http://localhost:8000/hook", demo)
    assert urls.resolve("http://127.0.0.1:8000/hook", demo).address is None  # connects by name


def test_a_delivery_is_checked_again_when_it_is_sent():
    """A host that turned private after registration (DNS rebinding) is refused at send time."""
    attempt = Attempt(
        delivery_id=1,
        number=1,
        callback_id=1,
        url="https://127.0.0.1:9/hook",
        secret="s",
        event_uid="e",
        event_type="test",
        body=b"{}",
        is_test=True,
    )
    outcome = sender.post(attempt, production(), current_clock())
    assert not outcome.delivered and outcome.error.startswith("refused: url host '127.0.0.1' resolves to")


def test_production_registration_over_http_names_the_reason(client, configure):
    _, token = user(client)
    configure(**PRODUCTION)
    response = client.post(
        "/api/v2/callbacks", json={"url": "https://169.254.169.254/x"}, headers=bearer(token)
    )
    assert response.status_code == 400
    assert "169.254.169.254" in response.json()["errorDescription"]
    response = client.post("/api/v2/callbacks", json={"url": "http://93.184.216.34/x"}, headers=bearer(token))
    assert response.status_code == 400 and "https only in production" in response.json()["errorDescription"]
    assert register(client, token, "https://93.184.216.34/x")["status"] == "ACTIVE"


def test_a_production_delivery_connects_to_the_checked_address_with_the_name_as_host(receiver):
    import socket

    port = receiver.server.server_address[1]
    if socket.getaddrinfo("localhost", port, type=socket.SOCK_STREAM)[0][4][0] != "127.0.0.1":
        pytest.skip("localhost does not resolve to 127.0.0.1 first here")
    receiver.secret = "s"
    attempt = Attempt(
        delivery_id=1,
        number=1,
        callback_id=1,
        url=f"http://localhost:{port}/pinned",
        secret="s",
        event_uid="e1",
        event_type="test",
        body=b"{}",
        is_test=True,
    )
    settings = production(callback_allowed_networks=["127.0.0.0/8"])
    outcome = sender.post(attempt, settings, current_clock())
    assert outcome.delivered, outcome
    [got] = receiver.received
    assert (got.host, got.path, got.signature_ok) == (f"localhost:{port}", "/pinned", True)
