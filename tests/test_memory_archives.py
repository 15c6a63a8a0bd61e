"""A real server keeps its memory while refusing ZIP bombs: the lying ZIP of the attacker's pass.

1 MB that inflates to 1 GiB of zeros, both headers claiming 1,000 bytes, sent to /api/v2/comfin
three times at once: the server used to inflate every copy before the CRC check (4.4 GB RSS).
"""

from __future__ import annotations

import base64
import json
from concurrent.futures import ThreadPoolExecutor

import httpx

from tests.fatturapa.archive_support import deflated, lying_zip, raw_zip
from tests.live_server import live_server

MB = 1024  # VmHWM is in KiB


def comfin_body(content: bytes) -> bytes:
    return json.dumps({"comunicationType": "LI", "dataFile": base64.b64encode(content).decode()}).encode()


def test_three_concurrent_zip_bombs_grow_peak_rss_by_less_than_60_mb(tmp_path):
    bomb = comfin_body(lying_zip())
    with live_server(tmp_path) as server:
        headers = {"Authorization": f"Bearer {server.sign_in()}", "Content-Type": "application/json"}

        def send(body: bytes) -> httpx.Response:
            return httpx.post(f"{server.base}/api/v2/comfin", content=body, headers=headers, timeout=60)

        # One small refused ZIP first: what the first request loads is not what a bomb costs.
        warm_up = send(comfin_body(raw_zip(deflated("../a.p7m", b"<a/>"))))
        assert warm_up.status_code == 400 and warm_up.json()["errorCode"] == "AR03", warm_up.text
        before_kb = server.reset_peak()  # start-up left the peak well above the RSS
        with ThreadPoolExecutor(3) as pool:
            answers = list(pool.map(send, [bomb] * 3))
        grown_kb = server.peak_rss_kb() - before_kb
        for answer in answers:
            assert 400 <= answer.status_code < 500 and answer.json()["errorCode"] == "AR03", answer.text
            assert "inflates beyond the 1000 bytes" in answer.json()["errorDescription"]
        assert grown_kb < 60 * MB, f"peak RSS grew by {grown_kb} KiB from {before_kb} KiB"
