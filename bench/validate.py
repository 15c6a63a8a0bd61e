"""Validation throughput: raw lxml parse + XSD against the full `check()` pipeline.

    .venv/bin/python bench/validate.py [--rounds 30] [--large-rounds 7]

Two corpora, reported apart because their costs differ in kind:
- typical: the example invoices (examples/), the official samples and the core fixtures
  (tests/fatturapa), and invoices of 1 to 20 detail lines (FSM10: 1 to 20 goods blocks) of
  each format generated from the core fixtures. Here the per-document fixed cost dominates.
- large: a generated ~1 MB FPR12 with 2000 detail lines. Here the per-line cost dominates.

For each, the raw side (parse + XSD, what any validator must do) and the `check()` side are
timed alternately in the same rounds, so that load from other processes hits both alike; the
best round of each is kept. Reported: the ratio raw / check() (targets: typical >= 0.50,
large >= 0.70), raw / (check() + SDI controls), and, for the large file, the slowest
asynchronous rules and the linearity of `check()` in the number of lines.
Works from any clone: every input is in the repository.
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
EXAMPLES_DIR = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fatturapa" / "core_fixtures"
OFFICIAL = ROOT / "tests" / "fatturapa" / "cases" / "official"
EXAMPLES = ("FPA12.xml", "FPR12.xml", "FSM10.xml", "TD17.xml")
FORMATS = ("FPA12", "FPR12", "FSM10")
TYPICAL_LINES = (1, 2, 3, 5, 8, 12, 20)
TYPICAL_TARGET = 0.50
LARGE_TARGET = 0.70
# No transmitter: the official samples would stop at 0094 and skip the rest of the work.
OPTIONS = CheckOptions(received_date=date(2026, 11, 23))
RATES = (Decimal("22.00"), Decimal("10.00"), Decimal("4.00"))
CENT = Decimal("0.01")


def fixture(fmt: str) -> etree._Element:
    return etree.fromstring((FIXTURES / f"IT01234560017_{fmt}.xml").read_bytes())


def _serialise(root: etree._Element) -> bytes:
    etree.indent(root, space="  ")
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def ordinary_invoice(fmt: str, lines: int, rates: tuple[Decimal, ...] = RATES) -> bytes:
    """The FPA12/FPR12 fixture with `lines` detail lines (rates in turn from `rates`), one summary
    block per rate and a matching payment: valid, passing every check."""
    root = fixture(fmt)
    goods = root.find("FatturaElettronicaBody/DatiBeniServizi")
    for old in goods.findall("DettaglioLinee") + goods.findall("DatiRiepilogo"):
        goods.remove(old)
    taxable = {rate: Decimal("0.00") for rate in rates[:lines]}
    for number in range(1, lines + 1):
        quantity, price = Decimal(number % 7 + 1), Decimal(number % 90 + 10) / 4
        total = (quantity * price).quantize(CENT)
        rate = rates[(number - 1) % len(rates)]
        taxable[rate] += total
        line = etree.SubElement(goods, "DettaglioLinee")
        etree.SubElement(line, "NumeroLinea").text = str(number)
        code = etree.SubElement(line, "CodiceArticolo")
        etree.SubElement(code, "CodiceTipo").text = "EAN"
        etree.SubElement(code, "CodiceValore").text = f"80{number:011d}"
        description = f"ARTICOLO {number:05d} - FORNITURA DI MATERIALE DI CONSUMO PER UFFICIO E MAGAZZINO"
        etree.SubElement(line, "Descrizione").text = description
        etree.SubElement(line, "Quantita").text = f"{quantity}.00"
        etree.SubElement(line, "UnitaMisura").text = "PZ"
        etree.SubElement(line, "PrezzoUnitario").text = f"{price:.2f}"
        etree.SubElement(line, "PrezzoTotale").text = f"{total}"
        etree.SubElement(line, "AliquotaIVA").text = f"{rate}"
    due = Decimal("0.00")
    for rate, amount in taxable.items():
        tax = (amount * rate / 100).quantize(CENT)
        due += amount + tax
        summary = etree.SubElement(goods, "DatiRiepilogo")
        etree.SubElement(summary, "AliquotaIVA").text = f"{rate}"
        etree.SubElement(summary, "ImponibileImporto").text = f"{amount}"
        etree.SubElement(summary, "Imposta").text = f"{tax}"
        etree.SubElement(summary, "EsigibilitaIVA").text = "I"
    root.find("FatturaElettronicaBody/DatiPagamento/DettaglioPagamento/ImportoPagamento").text = f"{due}"
    return _serialise(root)


def simplified_invoice(blocks: int) -> bytes:
    """The FSM10 fixture with `blocks` goods blocks at 22 %, within the 400.00 euro limit."""
    root = fixture("FSM10")
    body = root.find("FatturaElettronicaBody")
    for old in body.findall("DatiBeniServizi"):
        body.remove(old)
    for number in range(1, blocks + 1):
        goods = etree.SubElement(body, "DatiBeniServizi")
        etree.SubElement(goods, "Descrizione").text = f"SERVIZIO {number:03d} - ASSISTENZA TECNICA"
        etree.SubElement(goods, "Importo").text = f"{Decimal(number % 9 + 5):.2f}"
        etree.SubElement(etree.SubElement(goods, "DatiIVA"), "Aliquota").text = "22.00"
    return _serialise(root)


def generated(fmt: str, lines: int) -> bytes:
    return simplified_invoice(lines) if fmt == "FSM10" else ordinary_invoice(fmt, lines)


def typical_corpus() -> list[tuple[str, bytes]]:
    files = [EXAMPLES_DIR / name for name in EXAMPLES]
    files += sorted(OFFICIAL.glob("*.xml")) + sorted(FIXTURES.glob("*.xml"))
    corpus = [(path.relative_to(ROOT).as_posix(), path.read_bytes()) for path in files]
    corpus += [(f"{fmt} {n} lines", generated(fmt, n)) for fmt in FORMATS for n in TYPICAL_LINES]
    return corpus


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


SIDES: dict[str, Callable[[bytes], bool]] = {
    "raw parse+XSD": raw_validate,
    "check_sync()": sync_only,
    "full check()": full_check,
    "+ SDI controls": with_sdi_controls,
}


def interleaved_best(corpus: list[bytes], rounds: int) -> dict[str, float]:
    """Best time of each side over `corpus`, the sides taking turns within every round."""
    best = dict.fromkeys(SIDES, float("inf"))
    for _ in range(rounds):
        for label, fn in SIDES.items():
            start = time.perf_counter()
            for data in corpus:
                fn(data)
            best[label] = min(best[label], time.perf_counter() - start)
    return best


def report_corpus(title: str, corpus: list[bytes], rounds: int, target: float) -> float:
    megabytes = sum(map(len, corpus)) / 1e6
    print(f"{title}: {len(corpus)} files, {megabytes:.3f} MB, best of {rounds} interleaved rounds")
    results = interleaved_best(corpus, rounds)
    for label, seconds in results.items():
        print(
            f"  {label:>14}: {len(corpus) / seconds:8.1f} files/s {megabytes / seconds:7.2f} MB/s "
            f"({seconds * 1e6 / len(corpus):8.1f} us/file)"
        )
    raw = results["raw parse+XSD"]
    ratio = raw / results["full check()"]
    verdict = "met" if ratio >= target else "NOT met"
    print(f"  {'ratio':>14}: full check() = {ratio:.2f} of raw (target >= {target:.2f}: {verdict})")
    print(
        f"  {'':>14}  check_sync() = {raw / results['check_sync()']:.2f}; "
        f"check() + SDI controls = {raw / results['+ SDI controls']:.2f}"
    )
    return ratio


def async_stage(data: bytes, rounds: int) -> float:
    """Best time of the whole asynchronous stage on `data` (rules sharing their look-ups)."""
    report = check_sync(data, OPTIONS)
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        run_rules(report.root, report.format, OPTIONS.received_date, stage="async")
        best = min(best, time.perf_counter() - start)
    return best


def slowest_rules(data: bytes, rounds: int, top: int = 5) -> list[tuple[float, str]]:
    """Where the asynchronous stage spends its time on `data`: (seconds, rule) slowest first.
    Each rule runs on a fresh context here, so a rule that walks the detail lines pays the whole
    walk that, inside `check()`, the rules share."""
    report = check_sync(data, OPTIONS)
    timings = []
    for spec in rules_for(report.format, "async"):
        best = float("inf")
        for _ in range(rounds):
            ctx = RuleContext(report.root, report.format, OPTIONS.received_date)
            start = time.perf_counter()
            spec.run(ctx)
            best = min(best, time.perf_counter() - start)
        timings.append((best, f"{spec.code} {spec.check.__name__}"))
    return sorted(timings, reverse=True)[:top]


def best_time(fn: Callable[[bytes], bool], data: bytes, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn(data)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="rounds over the typical corpus")
    parser.add_argument("--large-rounds", type=int, default=7, help="rounds over the large file")
    parser.add_argument("--lines", type=int, default=2000, help="detail lines of the large invoice")
    args = parser.parse_args()

    typical = typical_corpus()
    for name, data in typical:
        assert raw_validate(data), f"{name}: the corpus must be XSD-valid"
    generated_files = [name for name, _ in typical if name.endswith(" lines")]
    for name, data in typical:
        if name in generated_files:
            report = check(data, OPTIONS)
            assert report.accepted, (name, report.errors)  # generated invoices pass every check
    large = ordinary_invoice("FPR12", args.lines, RATES[:1])
    report = check(large, OPTIONS)
    assert report.accepted, report.errors

    typical_ratio = report_corpus(
        f"typical corpus ({len(typical) - len(generated_files)} files of the repository, "
        f"{len(generated_files)} generated with {min(TYPICAL_LINES)}-{max(TYPICAL_LINES)} lines)",
        [data for _, data in typical],
        args.rounds,
        TYPICAL_TARGET,
    )
    print()
    large_ratio = report_corpus(
        f"large file (FPR12, {args.lines} lines, {len(large) / 1e6:.2f} MB)",
        [large],
        args.large_rounds,
        LARGE_TARGET,
    )
    stage_ms = async_stage(large, args.large_rounds) * 1e3
    print(f"  asynchronous stage alone (all rules): {stage_ms:.1f} ms")
    count = len(rules_for("FPR12", "async"))
    print(f"  slowest asynchronous rules, each on a fresh context ({count} rules):")
    for seconds, name in slowest_rules(large, args.large_rounds):
        print(f"    {seconds * 1e3:6.1f} ms  {name}")

    print("  linearity of check() in the number of detail lines:")
    per_line = []
    for factor in (1, 2, 4):
        lines = args.lines * factor
        data = ordinary_invoice("FPR12", lines, RATES[:1])
        seconds = best_time(full_check, data, args.large_rounds)
        per_line.append(seconds / lines)
        print(
            f"    {factor}x {lines:5d} lines {len(data) / 1e6:5.2f} MB: {seconds * 1e3:7.1f} ms"
            f" ({per_line[-1] * 1e6:.1f} us/line)"
        )
    print(f"    per-line cost 4x / 1x: {per_line[-1] / per_line[0]:.2f} (1.00 = linear)")

    print()
    print(
        f"summary: typical {typical_ratio:.2f} (target {TYPICAL_TARGET:.2f}), "
        f"large {large_ratio:.2f} (target {LARGE_TARGET:.2f})"
    )
    return 0 if typical_ratio >= TYPICAL_TARGET and large_ratio >= LARGE_TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
