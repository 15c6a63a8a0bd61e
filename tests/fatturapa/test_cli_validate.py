"""`varco validate`: human and JSON output, exit codes, defaults."""

from __future__ import annotations

import base64
import json

import pytest
import typer
from typer.testing import CliRunner

from tests.fatturapa.core_support import TRANSMITTER_ID
from varco.validate_cli import validate

app = typer.Typer()
app.command("validate")(validate)


@app.callback()
def _root() -> None:
    """Makes `validate` a subcommand, as in `varco.cli`."""


@pytest.fixture
def run(monkeypatch):
    monkeypatch.delenv("VARCO_TRANSMITTER_ID", raising=False)
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, ["validate", *args])

    return invoke


@pytest.fixture
def valid_file(tmp_path, invoice):
    path = tmp_path / "IT01234560017_00001.xml"
    path.write_bytes(invoice("FPR12"))
    return path


def test_valid_file_is_accepted_with_exit_0(run, valid_file):
    result = run(str(valid_file), "--today", "2026-11-23")
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == f"{valid_file}: ACCEPTED"


def test_refused_file_prints_one_line_per_finding_and_exit_1(run, tmp_path, samples_dir):
    result = run(str(samples_dir / "IT01234567890_FPR02.xml"))
    assert result.exit_code == 1
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith(
        f"{samples_dir / 'IT01234567890_FPR02.xml'}: 0092 FatturaPA 1.2.3 XSD: line 16: "
    )
    # the path once: the XSD message names it, so the line does not repeat it
    assert lines[0].count("/p:FatturaElettronica/FatturaElettronicaHeader/DatiTrasmissione/") == 1
    assert lines[0].endswith(")")
    assert lines[-1].endswith(": REFUSED")


def test_any_refused_file_makes_exit_1(run, valid_file, tmp_path):
    empty = tmp_path / "empty.xml"
    empty.write_bytes(b"")
    result = run(str(valid_file), str(empty))
    assert result.exit_code == 1
    assert f"{valid_file}: ACCEPTED" in result.stdout
    assert f"{empty}: FATRSM401 The XML file is empty" in result.stdout


def test_json_output(run, valid_file, samples_dir):
    signed = samples_dir / "signed" / "IT01234567890_FPR03.xml.p7m"
    result = run(
        "--json",
        "--today",
        "2026-11-23",
        "--no-sdi-controls",  # the official samples' VAT numbers have no valid check digit (00300/00301)
        str(valid_file),
        str(signed),
        str(samples_dir / "IT01234567890_FPR01.xml"),
    )
    assert result.exit_code == 1
    reports = json.loads(result.stdout)
    assert [r["file"] for r in reports] == [
        str(valid_file),
        str(signed),
        str(samples_dir / "IT01234567890_FPR01.xml"),
    ]
    assert reports[0] == {
        "file": str(valid_file),
        "accepted": True,
        "format": "FPR12",
        "signature": None,
        "errors": [],
    }
    assert reports[1]["signature"]["kind"] == "CAdES"
    assert reports[1]["signature"]["signing_time"] == "2018-12-21T15:58:13+00:00"
    assert reports[1]["accepted"] is True
    [error] = reports[2]["errors"]
    assert set(error) == {"code", "message", "xpath", "body", "hint", "stage"}
    assert error["code"] == "00306" and error["stage"] == "async"


def test_transmitter_defaults_to_the_environment(run, valid_file, monkeypatch):
    monkeypatch.setenv("VARCO_TRANSMITTER_ID", "IT01234560017")
    result = run(str(valid_file))
    assert result.exit_code == 1 and ": 0094 " in result.stdout
    assert run(str(valid_file), "--transmitter", TRANSMITTER_ID).exit_code == 0


def test_without_transmitter_0094_is_skipped(run, tmp_path, invoice):
    path = tmp_path / "other.xml"
    path.write_bytes(
        invoice("FPR12", {"FatturaElettronicaHeader/DatiTrasmissione/IdTrasmittente/IdCodice": "01234560017"})
    )
    assert run(str(path)).exit_code == 0


def test_account_vat_checks_the_issuer(run, valid_file):
    assert run(str(valid_file), "--account-vat", "IT01234560017").exit_code == 0
    result = run(str(valid_file), "--account-vat", "IT09876540015")
    assert result.exit_code == 1 and ": 0093 " in result.stdout


def test_skip_extra_schema(run, samples_dir):
    sample = str(samples_dir / "IT01234567890_FPR01.xml")
    assert run(sample).exit_code == 1
    assert run(sample, "--skip-extra-schema", "--no-sdi-controls").exit_code == 0
    # The sample's VAT numbers have no valid check digit: the SDI's own controls refuse it still.
    refused = run(sample, "--skip-extra-schema")
    assert refused.exit_code == 1 and ": 00301 [sdi] " in refused.stdout


def test_today_sets_the_receipt_day_for_00403(run, valid_file):
    assert run(str(valid_file), "--today", "2014-12-17").exit_code == 1  # invoice dated 2014-12-18
    assert run(str(valid_file), "--today", "2014-12-18").exit_code == 0


def test_base64_and_bad_base64_files(run, tmp_path, invoice):
    encoded = tmp_path / "invoice.b64"
    encoded.write_bytes(base64.encodebytes(invoice("FPR12")))
    assert run(str(encoded)).exit_code == 0
    bad = tmp_path / "bad.p7m"
    bad.write_bytes(b"MIIkBgYJKoZIhvcNAQcCoIIj9zCCI/MCAQExDzANBglghkgBZQMEAgEFADCCFrk!!")
    result = run(str(bad))
    assert result.exit_code == 1 and f"{bad}: 0098 " in result.stdout
    not_xml = tmp_path / "IT01234560017_00002.xml"
    not_xml.write_bytes(b"Fattura n. 1 del 18/12/2014")
    result = run(str(not_xml), "--no-sdi-controls")
    assert f"{not_xml}: 0092 The file is not XML: it starts with 'Fattura n. 1 del 18/12/2" in result.stdout


def test_missing_file_is_a_usage_error(run, valid_file, tmp_path):
    result = run(str(valid_file), str(tmp_path / "nope.xml"))
    assert result.exit_code == 2
    assert result.stderr.strip() == f"error: {tmp_path / 'nope.xml'}: no such file"
    assert result.stdout == ""


def test_directory_is_a_usage_error(run, tmp_path):
    result = run(str(tmp_path))
    assert result.exit_code == 2 and "is a directory" in result.stderr


def test_bad_today_is_a_usage_error(run, valid_file):
    result = run(str(valid_file), "--today", "23/11/2026")
    assert result.exit_code == 2
    assert result.stderr.strip() == "error: --today '23/11/2026' is not a date (YYYY-MM-DD)"


def test_the_sdis_own_controls_are_a_stage_of_their_own_by_default(run, tmp_path, invoice):
    from lxml import etree

    root = etree.fromstring(invoice("FPR12"))
    total = root.find(".//DettaglioLinee/PrezzoTotale")
    total.text = f"{float(total.text) + 2:.2f}"
    path = tmp_path / "wrong-total.xml"
    path.write_bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    result = run(str(path), "--today", "2026-11-23")
    assert result.exit_code == 1, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith(f"{path}: 00423 [sdi] /p:FatturaElettronica/") and "PrezzoTotale" in lines[0]
    assert lines[-1] == f"{path}: REFUSED"
    report = json.loads(run(str(path), "--today", "2026-11-23", "--json").stdout)[0]
    assert "00423" in {e["code"] for e in report["errors"]}  # (the summary's 00422 with it)
    assert {e["stage"] for e in report["errors"]} == {"sdi"}
    skipped = run(str(path), "--today", "2026-11-23", "--no-sdi-controls")
    assert skipped.exit_code == 0 and skipped.stdout.strip() == f"{path}: ACCEPTED"
