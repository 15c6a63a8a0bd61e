"""The asynchronous extra-schema rules of §7.3 against the fixture corpus in `cases/`."""

from __future__ import annotations

from pathlib import Path

import pytest
from lxml import etree

from tests.fatturapa.cases_support import (
    ASYNC_CODES,
    CASES_DIR,
    RECEIVED_DATE,
    Case,
    load_manifest,
    parse,
    xsd_errors,
)
from varco.fatturapa.findings import Finding
from varco.fatturapa.rules.async_rules._xml import MAX_PER_BODY
from varco.fatturapa.rules.registry import ORDINARY, RULES, SIMPLIFIED
from varco.fatturapa.rules.runner import run_rules

CASES = load_manifest()


def async_findings(root: etree._Element, fmt: str) -> list[Finding]:
    return run_rules(root, fmt, RECEIVED_DATE, stage="async")


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_case_is_xsd_valid(case: Case) -> None:
    assert xsd_errors(parse(case.path), case.format) == []


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_case_reports_exactly_the_expected_codes(case: Case) -> None:
    root = parse(case.path)
    assert root.get("versione") == case.format
    findings = async_findings(root, case.format)
    assert {f.code for f in findings} == set(case.expect), [f.upload_text for f in findings]
    if case.body is not None:
        assert {f.body for f in findings} == {case.body}
        assert all(f.message.startswith(f"body {case.body}: ") for f in findings)


def test_corpus_breaks_every_async_code() -> None:
    covered = {code for case in CASES for code in case.expect}
    assert ASYNC_CODES - covered == set()


def test_every_async_code_is_registered_and_nothing_else() -> None:
    assert {spec.code for spec in RULES if spec.stage == "async"} == ASYNC_CODES


def test_every_base_format_and_the_batch_are_in_the_corpus() -> None:
    files = {case.file for case in CASES}
    assert {"base/FPA12.xml", "base/FPR12.xml", "base/FSM10.xml", "base/FPR12_batch.xml"} <= files


def test_generated_corpus_is_up_to_date() -> None:
    """The committed variants and manifest are what make_cases.py writes (re-run it after edits)."""
    from tests.fatturapa.cases import make_cases

    generated = make_cases.build()
    stale = [path for path, content in generated.items() if (CASES_DIR / path).read_bytes() != content]
    assert stale == []
    on_disk = {f"variants/{path.name}" for path in (CASES_DIR / "variants").glob("*.xml")}
    assert on_disk == {path for path in generated if path.startswith("variants/")}


@pytest.mark.parametrize("name", ["FPA01", "FPA02", "FPA03", "FPR01", "FPR03"])
def test_official_samples_fail_on_the_check_digit(name: str) -> None:
    """decisions.md: the official samples pass the XSD but their tax codes have wrong check digits."""
    root = parse(CASES_DIR / "official" / f"IT01234567890_{name}.xml")
    codes = {f.code for f in async_findings(root, root.get("versione"))}
    assert codes & {"00305", "00306"}


def test_rule_formats_follow_the_contract() -> None:
    formats: dict[str, set[str]] = {}
    for spec in RULES:
        if spec.stage == "async":
            formats.setdefault(spec.code, set()).update(spec.formats)
    ordinary_only = {"00411", "00413", "00415", "00419", "00420", "00427", "00428", "00429", "00430"}
    ordinary_only |= {"00437", "00438", "00443", "00444", "00472", "00473", "00474", "00475"}
    for code in ordinary_only:
        assert formats[code] == set(ORDINARY), code
    assert formats["00460"] == set(SIMPLIFIED)
    for code in ASYNC_CODES - ordinary_only - {"00460"}:
        assert formats[code] == set(ORDINARY | SIMPLIFIED), code


def _only(case_name: str) -> Finding:
    root = parse(CASES_DIR / "variants" / f"{case_name}.xml")
    findings = async_findings(root, root.get("versione"))
    assert len(findings) == 1, [f.upload_text for f in findings]
    return findings[0]


def test_finding_names_value_element_number_line_and_xpath() -> None:
    finding = _only("00400_line_without_natura")
    assert finding.stage == "async"
    assert finding.body == 1
    assert "2.2.1.14 <Natura>" in finding.message and "detail line 4" in finding.message
    assert "XML line " in finding.message
    assert finding.xpath is not None and finding.xpath.endswith("DettaglioLinee[4]")
    assert finding.hint
    assert finding.upload_text.startswith("00400 - ")


def test_header_level_finding_has_no_body() -> None:
    finding = _only("00306_company_check_digit")
    assert finding.body is None
    assert "'09876540016'" in finding.message and "1.4.1.2" in finding.message


def test_simplified_findings_use_simplified_element_numbers() -> None:
    assert "1.3.1.1.2" in _only("00305_simplified").message
    assert "1.3.1.2" in _only("00306_simplified").message
    assert "2.2.4 <Natura>" in _only("00400_simplified").message
    assert "2.1.2.2 <DataFR>" in _only("00418_simplified").message
    assert "550.00" in _only("00460_over_400").message


def test_batch_finding_names_body_two() -> None:
    finding = _only("batch_00425_body2")
    assert finding.body == 2
    assert finding.message.startswith("body 2: 2.1.1.4 <Numero> 'ABC'")
    assert "FatturaElettronicaBody[2]" in (finding.xpath or "")


def _with_lines(count: int) -> etree._Element:
    """base/FPR12.xml with `count` extra zero-rate lines lacking Natura (rule 00400)."""
    root = parse(CASES_DIR / "base" / "FPR12.xml")
    goods = root.find("FatturaElettronicaBody/DatiBeniServizi")
    template = goods.find("DettaglioLinee[4]")
    anchor = goods.findall("DettaglioLinee")[-1]
    for number in range(count):
        line = etree.fromstring(etree.tostring(template))
        line.find("NumeroLinea").text = str(6 + number)
        line.remove(line.find("Natura"))
        anchor.addnext(line)
        anchor = line
    return root


def test_findings_per_rule_and_body_are_capped() -> None:
    findings = async_findings(_with_lines(25), "FPR12")
    assert [f.code for f in findings] == ["00400"] * MAX_PER_BODY
    assert findings[-1].message.endswith(f"(and {25 - MAX_PER_BODY} more like this in the same body)")


def test_large_invoice_is_checked_line_by_line() -> None:
    """Thousands of lines (about 1 MB) still give exactly the capped findings of the broken rule."""
    root = _with_lines(4000)
    assert len(etree.tostring(root)) > 1_000_000
    assert xsd_errors(root, "FPR12") == []
    assert {f.code for f in async_findings(root, "FPR12")} == {"00400"}


def test_corpus_files_are_where_the_manifest_says() -> None:
    missing = [case.file for case in CASES if not Path(case.path).is_file()]
    assert missing == []
