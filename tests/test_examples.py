"""The files in examples/ pass every check for the demo accounts: the upload's, the asynchronous
rules and the SDI's own controls (with the demo transmitter and demo-premium as the sender)."""

from __future__ import annotations

import base64
import json
import time
from datetime import date
from pathlib import Path

import httpx
import pytest

from tests.live_server import live_server
from varco.fatturapa import CheckOptions, check
from varco.fatturapa.sdi_controls import check_sdi
from varco.invoices.examples import FORMATS, template

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_example_passes_every_check_and_is_the_packaged_template(fmt):
    content = (EXAMPLES / f"{fmt}.xml").read_bytes()
    assert content == template(fmt)  # `varco demo invoice` starts from the same file
    options = CheckOptions(
        transmitter_id="IT05555550028", account_vat="IT01234560017", received_date=date(2026, 11, 23)
    )
    report = check(content, options)
    assert report.accepted, [f.upload_text for f in report.errors]
    assert check_sdi(report) == []


def test_the_signed_example_holds_its_plain_twin(tmp_path):
    from asn1crypto import cms

    signed = cms.ContentInfo.load((EXAMPLES / "FPR12-signed.xml.p7m").read_bytes())
    assert (
        signed["content"]["encap_content_info"]["content"].native
        == (EXAMPLES / "FPR12-signed.xml").read_bytes()
    )
    li = cms.ContentInfo.load((EXAMPLES / "LI.xml.p7m").read_bytes())
    assert li["content"]["encap_content_info"]["content"].native == (EXAMPLES / "LI.xml").read_bytes()
    body = json.loads((EXAMPLES / "comfin-LI.json").read_text())
    assert base64.b64decode(body["dataFile"]) == (EXAMPLES / "LI.xml.p7m").read_bytes()


def test_every_example_goes_through_a_fresh_demo_server_unchanged(tmp_path):
    """README command 1's server and demo-premium: each file as it is in examples/, to its end."""
    with live_server(tmp_path) as server:
        api = httpx.Client(base_url=server.base, headers={"Authorization": f"Bearer {server.sign_in()}"})
        sent = {}
        for name, path in [(f"{fmt}.xml", "upload") for fmt in FORMATS] + [
            ("FPR12-signed.xml.p7m", "uploadSigned")
        ]:
            data = base64.b64encode((EXAMPLES / name).read_bytes()).decode()
            answer = api.post(f"/services/invoice/{path}", json={"dataFile": data}).json()
            assert answer["errorCode"] == "0000", (name, answer)
            sent[name] = answer["uploadFileName"]
        request_id = api.post(  # curl -H 'Content-Type: application/json' --data @examples/comfin-LI.json
            "/api/v2/comfin",
            content=(EXAMPLES / "comfin-LI.json").read_bytes(),
            headers={"Content-Type": "application/json"},
        ).json()
        assert "requestId" in request_id, request_id

        def states() -> dict[str, str]:
            found = {}
            for name, filename in sent.items():
                detail = api.get("/api/v2/invoices-out/detail", params={"filename": filename}).json()
                found[name] = detail["invoices"][0]["status"]
            info = api.get(f"/api/v2/comfin/{request_id['requestId']}").json()
            found["comfin-LI.json"] = f"{info['result']} {info.get('elaboratedResult')}"
            return found

        final = {"Consegnata", "Accettata", "SF02 ES01"}  # a PA invoice goes on to Accettata
        deadline = time.monotonic() + 60
        while not set((now := states()).values()) <= final and time.monotonic() < deadline:
            time.sleep(0.2)  # another process's worker: nothing here to wait on but its answers
        assert set(now.values()) <= final, now
