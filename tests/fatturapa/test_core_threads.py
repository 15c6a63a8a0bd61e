"""Parsers and compiled schemas are per thread: concurrent checks give the same answers."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from lxml import etree

from varco.fatturapa import check_sync, schema


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


def test_the_schemas_compile_whichever_document_loader_libxml2_has_installed():
    # lxml installs its loader process-wide around each parse; a parse that another thread ends
    # during a compile can put libxml2's own loader back, which knows nothing of our resolver. The
    # xmldsig import must then still resolve: it points at the packaged copy by file path.
    plain = etree.XMLParser(no_network=True, resolve_entities=False, load_dtd=False)  # no resolver
    for spec in schema.SCHEMAS.values():
        xsd = (schema._XSD_DIR / spec.file).read_bytes()
        with pytest.raises(etree.XMLSchemaParseError, match="xmldsig"):
            etree.XMLSchema(etree.fromstring(xsd, plain))  # as published: needs the network
        compiled = etree.XMLSchema(etree.fromstring(schema.with_packaged_xmldsig(xsd), plain))
        assert compiled is not None
