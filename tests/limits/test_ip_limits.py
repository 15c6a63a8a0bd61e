"""§5.6/§8.1 per-IP limits per endpoint family, on both backends and databases."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient

from tests.factories import bearer, make_account, sign_in
from varco.limits import ip
from varco.settings import Settings

SECOND = timedelta(seconds=1)


def signin(client: TestClient, username: str = "nobody", password: str = "wrong"):
    return client.post(
        "/auth/signin", data={"grant_type": "password", "username": username, "password": password}
    )


def test_authentication_is_one_per_minute_per_ip(limited, clock):
    account = make_account()
    assert signin(limited, account.username, "s3cret-pw").status_code == 200
    refused = signin(limited, account.username, "s3cret-pw")
    assert refused.status_code == 429
    assert refused.headers["Retry-After"] == "60"
    body = refused.json()
    assert body["error"] == "too_many_requests"
    assert "at most 1 per minute per IP address" in body["error_description"]
    assert "retry in 60 s" in body["error_description"]
    clock.advance(59 * SECOND)
    assert signin(limited, account.username, "s3cret-pw").headers["Retry-After"] == "1"
    clock.advance(SECOND)
    token = signin(limited, account.username, "s3cret-pw").json()
    # refresh is an authentication request too, and wrong credentials count like right ones
    refresh = {"grant_type": "refresh_token", "refresh_token": token["refresh_token"]}
    assert limited.post("/auth/signin", data=refresh).status_code == 429
    clock.advance(60 * SECOND)
    assert signin(limited).status_code == 400
    assert limited.post("/auth/signin", data=refresh).status_code == 429


@pytest.mark.parametrize("path", ["upload", "uploadSigned"])
def test_upload_and_upload_signed_are_30_per_minute_each(limited, clock, path):
    token = sign_in(limited, make_account().username)
    other = "uploadSigned" if path == "upload" else "upload"

    def send(name: str):
        return limited.post(f"/services/invoice/{name}", json={"dataFile": ""}, headers=bearer(token))

    assert all(send(path).status_code != 429 for _ in range(30))
    refused = send(path)
    assert refused.status_code == 429
    body = refused.json()  # the §2.8 upload result shape, as upload clients expect
    assert body["uploadFileName"] is None and body["errorCode"] == "0429"
    assert "at most 30 per minute per IP address" in body["errorDescription"]
    assert refused.headers["Retry-After"] == "60"
    assert send(other).status_code != 429  # a separate family
    clock.advance(60 * SECOND)
    assert send(path).status_code != 429


FAMILIES = {
    "sent": ["/api/v2/invoices-out", "/services/invoice/out/findByUsername"],
    "received": ["/api/v2/invoices-in", "/services/invoice/in/findByUsername"],
    "notifications on sent": [
        "/api/v2/invoices-out/notifications",
        "/services/notification/out/getByFilename",
        "/services/notification/out/123",
        "/api/v2/invoices-out/notifications/detail",
    ],
    "notifications on received": [
        "/api/v2/invoices-in/notifications",
        "/services/notification/in/getByInvoiceFilename",
    ],
}


@pytest.mark.parametrize("family", list(FAMILIES))
def test_each_find_family_is_12_per_minute_v1_and_v2_alike(limited, clock, family):
    paths = FAMILIES[family]
    # Whether the route exists yet (404), needs a token (401) or answers: the IP limit comes first.
    for i in range(12):
        assert limited.get(paths[i % len(paths)]).status_code != 429
    for path in paths:
        refused = limited.get(path)
        assert refused.status_code == 429, path
        assert refused.json()["errorCode"] == "0429"
        assert "at most 12 per minute per IP address" in refused.json()["errorDescription"]
    for other, other_paths in FAMILIES.items():
        if other != family:
            assert limited.get(other_paths[0]).status_code != 429, other


def test_a_route_in_a_limited_family_answers_until_the_limit(app, limited, clock):
    @app.get("/services/notification/in/limits-probe")
    def probe() -> dict:
        return {"ok": True}

    assert [limited.get("/services/notification/in/limits-probe").status_code for _ in range(13)] == (
        [200] * 12 + [429]
    )
    clock.advance(30 * SECOND)
    assert limited.get("/services/notification/in/limits-probe").status_code == 429
    clock.advance(30 * SECOND)
    assert limited.get("/services/notification/in/limits-probe").status_code == 200


def test_the_window_slides(limited, clock):
    path = "/api/v2/invoices-in"
    for _ in range(6):
        limited.get(path)
    clock.advance(30 * SECOND)
    for _ in range(6):
        limited.get(path)
    refused = limited.get(path)
    assert refused.status_code == 429 and refused.headers["Retry-After"] == "30"
    clock.advance(30 * SECOND)  # the first six are a minute old: six slots
    assert [limited.get(path).status_code != 429 for _ in range(7)] == [True] * 6 + [False]


def test_unlimited_paths_are_untouched(limited):
    assert all(limited.get("/health").status_code == 200 for _ in range(20))
    assert all(limited.post("/api/v2/invoices-out/download").status_code != 429 for _ in range(20))


def test_each_ip_has_its_own_buckets(app, limited, clock):
    assert signin(limited).status_code == 400
    assert signin(limited).status_code == 429
    with TestClient(app, client=("203.0.113.5", 40000)) as elsewhere:
        assert signin(elsewhere).status_code == 400
        assert signin(elsewhere).status_code == 429


def test_forwarded_for_is_ignored_from_untrusted_peers(app, limited, clock):
    with TestClient(app, client=("203.0.113.9", 40000)) as client:
        first = client.post("/auth/signin", data={}, headers={"X-Forwarded-For": "198.51.100.1"})
        second = client.post("/auth/signin", data={}, headers={"X-Forwarded-For": "198.51.100.2"})
    assert first.status_code == 400 and second.status_code == 429  # both are the peer 203.0.113.9


def test_forwarded_for_is_honoured_from_trusted_proxies(app, limited, configure, clock):
    configure(trusted_proxies='["10.0.0.0/8"]')
    with TestClient(app, client=("10.1.2.3", 40000)) as proxy:

        def via(chain: str):
            return proxy.post("/auth/signin", data={}, headers={"X-Forwarded-For": chain})

        assert via("198.51.100.1").status_code == 400
        assert via("198.51.100.2").status_code == 400
        assert via("198.51.100.1").status_code == 429
        # a client cannot escape by prepending hops: the rightmost untrusted hop is the client
        assert via("192.0.2.77, 198.51.100.2").status_code == 429
        assert via("198.51.100.3, 10.9.9.9").status_code == 400  # behind two of our proxies
        assert proxy.post("/auth/signin", data={}).status_code == 400  # no header: the proxy itself


def test_client_ip_resolution():
    settings = Settings(trusted_proxies=["10.0.0.1", "fd00::/8"])
    assert ip.client_ip("10.0.0.1", ["1.2.3.4"], settings) == "1.2.3.4"
    assert ip.client_ip("10.0.0.1", ["9.9.9.9, 1.2.3.4"], settings) == "1.2.3.4"
    assert ip.client_ip("10.0.0.1", ["9.9.9.9", "1.2.3.4, 10.0.0.1"], settings) == "1.2.3.4"
    assert ip.client_ip("fd00::5", ["2001:db8::1"], settings) == "2001:db8::1"
    assert ip.client_ip("10.0.0.2", ["1.2.3.4"], settings) == "10.0.0.2"
    assert ip.client_ip("10.0.0.1", [], settings) == "10.0.0.1"
    assert ip.client_ip("1.2.3.4", ["5.6.7.8"], Settings()) == "1.2.3.4"


def test_bad_trusted_proxies_refuse_to_start(configure):
    from varco.app import create_app

    configure(trusted_proxies='["not-an-address"]')
    with pytest.raises(ValueError, match="VARCO_TRUSTED_PROXIES: .not-an-address. is not an IP"):
        create_app()


def test_switched_off_for_local_development(app, backend, configure, clock):
    from varco.limits.middleware import use_limiter

    configure(ip_limits_enabled="false")
    use_limiter(app, backend)
    with TestClient(app) as client:
        assert all(signin(client).status_code == 400 for _ in range(5))
