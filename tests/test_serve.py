"""README command 1 in miniature: `varco serve` on the embedded default, demo sign-in, refresh, userInfo."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import httpx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_serve_with_demo_data_and_embedded_worker(tmp_path):
    port = _free_port()
    env = {**os.environ, "VARCO_DATA_DIR": str(tmp_path), "VARCO_PROFILE": "demo"}
    env.pop("VARCO_DATABASE_URL", None)
    env.pop("VARCO_REDIS_URL", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "varco.cli", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise AssertionError("server did not start")
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
    finally:
        proc.terminate()
        output, _ = proc.communicate(timeout=30)
    assert "demo account created: demo-premium / demo-premium-pw" in output
    assert "demo account created: demo-admin / demo-admin-pw" in output
    assert "embedded worker started" in output
    assert "Application shutdown complete" in output  # clean shutdown (uvicorn re-raises SIGTERM)
