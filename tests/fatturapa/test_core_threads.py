"""Parsers and compiled schemas are per thread: concurrent checks give the same answers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from varco.fatturapa import check_sync


def test_concurrent_checks_report_their_own_errors(invoice):
    valid = invoice("FPR12")
    broken = valid.replace(b"<TipoDocumento>TD01<", b"<TipoDocumento>TD99<")
    simplified = invoice("FSM10")
    inputs = [valid, broken, simplified] * 40

    def outcome(data: bytes) -> tuple[bool, list[str]]:
        report = check_sync(data)
        return report.accepted, [f.message for f in report.errors]

    expected = [outcome(data) for data in inputs[:3]] * 40
    with ThreadPoolExecutor(max_workers=6) as pool:
        assert list(pool.map(outcome, inputs)) == expected
    assert expected[1][0] is False and "TD99" in expected[1][1][0]
