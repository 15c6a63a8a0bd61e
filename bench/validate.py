"""Validation throughput: raw lxml parse + XSD against the full `check()` pipeline.

    .venv/bin/python bench/validate.py [--rounds 5]

Corpus: the official valid samples (plus the third-party FSM10) and a generated ~1 MB FPR12
invoice with thousands of DettaglioLinee (valid, correct check digits). Prints files/s and MB/s
of (a) raw parse + XSD and (b) `check()` (both stages, every rule), their ratio (target: full
>= 50 % of raw), and `check()` times for 1x, 2x, 4x line counts (linearity).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path

from lxml import etree

from varco.fatturapa import CheckOptions, check, check_sync
from varco.fatturapa.rules.registry import RuleContext, rules_for
from varco.fatturapa.rules.runner import run_rules
from varco.fatturapa.schema import schema_for
from varco.fatturapa.sdi_controls import check_sdi

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT.parent / "shared" / "fatturapa" / "samples"
BASE_INVOICE = ROOT / "tests" / "fatturapa" / "core_fixtures" / "IT01234560017_FPR12.xml"
VALID_SAMPLES = [
    "IT01234567890_FPA01.xml",
    "IT01234567890_FPA02.xml",
    "IT01234567890_FPA03.xml",
    "IT01234567890_FPR01.xml",
    "IT01234567890_FPR03.xml",
    "third-party/IT02780790107_11009.xml",
]
# No transmitter: the official samples would stop at 0094 and skip the rest of the work.
OPTIONS = CheckOptions(received_date=date(2026, 11, 23))


def large_invoice(lines: int) -> bytes:
    """The FPR12 fixture with `lines` detail lines at 22 % and a matching summary and payment."""
    root = etree.fromstring(BASE_INVOICE.read_bytes())
    goods = root.find("FatturaElettronicaBody/DatiBeniServizi")
    for line in goods.findall("DettaglioLinee"):
        goods.remove(line)
    summary = goods.find("DatiRiepilogo")
    taxable = Decimal("0.00")
    for number in range(1, lines + 1):
        quantity, price = Decimal(number % 7 + 1), Decimal(number % 90 + 10) / 4
        total = (quantity * price).quantize(Decimal("0.01"))
        taxable += total
        line = etree.Element("DettaglioLinee")
        for name, text in (
            ("NumeroLinea", str(number)),
            ("CodiceArticolo", None),
            (
                "Descrizione",
                f"ARTICOLO {number:05d} - FORNITURA DI MATERIALE DI CONSUMO PER UFFICIO E MAGAZZINO",
            ),
            ("Quantita", f"{quantity}.00"),
            ("UnitaMisura", "PZ"),
            ("PrezzoUnitario", f"{price:.2f}"),
            ("PrezzoTotale", f"{total}"),
            ("AliquotaIVA", "22.00"),
        ):
            if name == "CodiceArticolo":
                code = etree.SubElement(line, name)
                etree.SubElement(code, "CodiceTipo").text = "EAN"
                etree.SubElement(code, "CodiceValore").text = f"80{number:011d}"
                continue
            etree.SubElement(line, name).text = text
        summary.addprevious(line)
    tax = (taxable * Decimal("0.22")).quantize(Decimal("0.01"))
    summary.find("ImponibileImporto").text = f"{taxable}"
    summary.find("Imposta").text = f"{tax}"
    root.find(
        "FatturaElettronicaBody/DatiPagamento/DettaglioPagamento/ImportoPagamento"
    ).text = f"{taxable + tax}"
    etree.indent(root, space="  ")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def raw_validate(data: bytes) -> bool:
    """What any validator must do at least: parse and validate against the XSD."""
    root = etree.fromstring(data, etree.XMLParser(resolve_entities=False, no_network=True))
    return schema_for(root.tag).validate(root)


def full_check(data: bytes) -> bool:
    return check(data, OPTIONS).accepted


def with_sdi_controls(data: bytes) -> bool:
    """What `varco validate` does by default: both stages, then the SDI's own controls."""
    report = check(data, OPTIONS)
    return not check_sdi(report, received_date=OPTIONS.received_date) and report.accepted


def sync_only(data: bytes) -> bool:
    return check_sync(data, OPTIONS).accepted


def async_stage(data: bytes, rounds: int) -> float:
    """Best time of the whole asynchronous stage on `data` (rules sharing their line lookups)."""
    report = check_sync(data, OPTIONS)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run_rules(report.root, report.format, OPTIONS.received_date, stage="async")
        best = min(best, time.perf_counter() - start)
    return best


def slowest_rules(data: bytes, rounds: int, top: int = 5) -> list[tuple[float, str]]:
    """Where the asynchronous stage spends its time on `data`: (seconds, rule) slowest first.
    Each rule runs alone here, so a rule that walks the detail lines pays the whole walk that,
    inside `check()`, the rules share."""
    report = check_sync(data, OPTIONS)
    ctx = RuleContext(report.root, report.format, OPTIONS.received_date)
    timings = []
    for spec in rules_for(report.format, "async"):
        best = float("inf")
        for _ in range(rounds):
            start = time.perf_counter()
            spec.run(ctx)
            best = min(best, time.perf_counter() - start)
        timings.append((best, f"{spec.code} {spec.check.__name__}"))
    return sorted(timings, reverse=True)[:top]


def best_time(fn: Callable[[bytes], bool], corpus: list[bytes], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for data in corpus:
            fn(data)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="repetitions; the best is reported")
    parser.add_argument("--lines", type=int, default=2000, help="detail lines of the large invoice")
    args = parser.parse_args()

    large = large_invoice(args.lines)
    corpus = [(SAMPLES / name).read_bytes() for name in VALID_SAMPLES] + [large]
    for data in corpus:
        assert raw_validate(data), "corpus must be XSD-valid"
    report = check(large, OPTIONS)
    assert report.accepted, report.errors  # the large invoice passes every check

    megabytes = sum(map(len, corpus)) / 1e6
    print(
        f"corpus: {len(corpus)} files, {megabytes:.2f} MB "
        f"(large invoice {len(large) / 1e6:.2f} MB, {args.lines} lines)"
    )
    results = {}
    for label, fn in (
        ("raw parse+XSD", raw_validate),
        ("check_sync()", sync_only),
        ("full check()", full_check),
        ("+ SDI controls", with_sdi_controls),
    ):
        seconds = best_time(fn, corpus, args.rounds)
        results[label] = seconds
        print(
            f"{label:>14}: {len(corpus) / seconds:8.1f} files/s {megabytes / seconds:7.2f} MB/s "
            f"({seconds * 1e3:.1f} ms)"
        )
    ratio = results["raw parse+XSD"] / results["full check()"]
    print(
        f"{'ratio':>14}: full = {ratio:.0%} of raw (target >= 50 %); sync only = "
        f"{results['raw parse+XSD'] / results['check_sync()']:.0%} of raw"
    )
    sdi_ratio = results["raw parse+XSD"] / results["+ SDI controls"]
    print(f"{'ratio':>14}: check() + SDI controls = {sdi_ratio:.0%} of raw (target >= 50 %)")
    stage_ms = async_stage(large, args.rounds) * 1e3
    print(f"asynchronous stage on the large invoice (all rules): {stage_ms:.1f} ms")
    rules = slowest_rules(large, args.rounds)
    count = len(rules_for("FPR12", "async"))
    print(f"slowest asynchronous rules on the large invoice, each alone ({count} rules):")
    for seconds, name in rules:
        print(f"  {seconds * 1e3:6.1f} ms  {name}")

    print("linearity of check() in the number of detail lines:")
    base = args.lines
    per_line = []
    for factor in (1, 2, 4):
        data = large_invoice(base * factor)
        seconds = best_time(full_check, [data], args.rounds)
        per_line.append(seconds / (base * factor))
        print(
            f"  {factor}x {base * factor:5d} lines {len(data) / 1e6:5.2f} MB: {seconds * 1e3:7.1f} ms"
            f" ({per_line[-1] * 1e6:.1f} us/line)"
        )
    print(f"  per-line cost 4x / 1x: {per_line[-1] / per_line[0]:.2f} (1.00 = linear)")
    return 0 if ratio >= 0.5 else 1


if __name__ == "__main__":
    sys.exit(main())
