"""README command 1 in miniature: `varco serve` on the embedded default, demo sign-in, refresh,
userInfo; what it leaves on disk and in its log."""

from __future__ import annotations

import stat

import httpx

from tests.live_server import live_server
from tests.panel.support import csrf_of


def test_serve_with_demo_data_and_embedded_worker(tmp_path):
    with live_server(tmp_path) as server:
        base = server.base
        token = httpx.post(
            f"{base}/auth/signin",
            data={"grant_type": "password", "username": "demo-premium", "password": "demo-premium-pw"},
        ).json()
        assert token["expires_in"] == 1800
        refreshed = httpx.post(
            f"{base}/auth/signin",
            data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]},
        ).json()
        info = httpx.get(
            f"{base}/auth/userInfo", headers={"Authorization": f"Bearer {refreshed['access_token']}"}
        )
        assert info.status_code == 200 and info.json()["username"] == "demo-premium"
        basic = httpx.post(
            f"{base}/auth/signin",
            data={"grant_type": "password", "username": "demo-basic", "password": "demo-basic-pw"},
        )
        assert basic.status_code == 200  # basic user delegated to demo-premium
        with httpx.Client(base_url=base, follow_redirects=True) as browser:  # ready in the panel
            form = browser.get("/panel/login")
            page = browser.post(
                "/panel/login",
                data={
                    "username": "demo-premium",
                    "password": "demo-premium-pw",
                    "csrf_token": csrf_of(form.text),
                },
            )
            assert page.url.path == "/panel/invoices/out", page.url
        still = httpx.get(
            f"{base}/auth/userInfo", headers={"Authorization": f"Bearer {refreshed['access_token']}"}
        )
        assert still.status_code == 200  # the panel sign-in revoked nothing
    output = server.log()
    assert "demo account created: demo-premium / demo-premium-pw" in output
    assert "demo account created: demo-admin / demo-admin-pw" in output
    assert "embedded worker started" in output
    assert "Application shutdown complete" in output  # clean shutdown (uvicorn re-raises SIGTERM)


def test_data_files_are_readable_by_the_owner_only(tmp_path):
    with live_server(tmp_path) as server:
        server.sign_in()
        paths = [server.data_dir, *server.data_dir.rglob("*")]
    assert any(p.name == "varco.sqlite3" for p in paths) and any(p.name == "huey.sqlite3" for p in paths)
    for path in paths:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode & 0o077 == 0, f"{path} is {oct(mode)}"


def test_credentials_in_a_query_string_stay_out_of_the_access_log(tmp_path):
    with live_server(tmp_path) as server:
        refused = httpx.post(
            f"{server.base}/auth/signin?grant_type=password&username=demo-premium&password=Hunter2-Secret",
            data={},
        )
        assert refused.status_code == 400
        token = server.sign_in()
        httpx.get(f"{server.base}/auth/userInfo?access_token={token}&refresh_token=R3fresh-Secret")
        httpx.get(f"{server.base}/auth/userInfo?p%61ssword=Encoded-Secret&bearer=Bearer-Secret")
        log = server.log()
    assert "/auth/signin?grant_type=password&username=demo-premium&password=***" in log
    for secret in ("Hunter2-Secret", token, "R3fresh-Secret", "Encoded-Secret", "Bearer-Secret"):
        assert secret not in log
