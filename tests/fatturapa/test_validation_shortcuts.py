"""The shortcuts the checks take for speed give the answers of the slower ways they replace."""

from __future__ import annotations

from decimal import Decimal

import pytest
from lxml import etree

from varco.fatturapa import check_sync, extract_summary, summary
from varco.fatturapa.errors import FatturaPAError
from varco.fatturapa.parsing import MAX_ATTRIBUTES, parse_xml, text_at, texts_at
from varco.fatturapa.parties import party, string_value
from varco.fatturapa.rules.async_rules import simplified
from varco.fatturapa.rules.async_rules._xml import decimal, decimal_at, line_facts
from varco.fatturapa.rules.registry import RULES, rules_for


@pytest.mark.parametrize(
    "xml",
    [
        b"<r><a>12.50</a></r>",
        b"<r><a></a></r>",
        b"<r><a/></r>",
        b"<r><a>1<!-- c -->2<?pi x?>3<b>4</b>5</a>tail</r>",
        b"<r><a><!-- only a comment --></a></r>",
        b"<r><a><![CDATA[7]]>8</a></r>",
    ],
)
def test_string_value_is_xpath_string(xml):
    element = etree.fromstring(xml).find("a")
    assert string_value(element) == text_at(element.getparent(), "a")


def test_string_value_of_nothing_is_none():
    assert string_value(None) is None


def test_many_attributes_are_still_counted_exactly():
    attributes = "".join(f' a{n}="x"' for n in range(MAX_ATTRIBUTES + 1))
    with pytest.raises(FatturaPAError) as raised:
        parse_xml(f"<r{attributes}/>".encode())
    assert raised.value.finding.code == "0092"
    assert f"{MAX_ATTRIBUTES + 1} attributes" in raised.value.finding.message


def test_rules_for_is_the_registered_order():
    for fmt in ("FPA12", "FPR12", "FSM10"):
        for stage in ("sync", "async", None):
            expected = [r for r in RULES if fmt in r.formats and (stage is None or r.stage == stage)]
            assert list(rules_for(fmt, stage)) == expected


@pytest.mark.parametrize(
    "xml",
    [
        b"<r><a>12.50</a><a>1.25</a></r>",
        b"<r><a></a><a/></r>",
        b"<r><a>1<!-- c -->2<?pi x?>3</a>tail</r>",
        b"<r><a><!-- only a comment --></a></r>",
        b"<r><a><![CDATA[7]]>8</a></r>",
    ],
)
def test_summary_texts_are_xpath_text_nodes(xml):
    parent = etree.fromstring(xml)
    assert summary._texts([parent], "a") == texts_at(parent, "a")


# Look-alikes the walk over a goods block must skip: a line nested in another line, values nested
# in a line's blocks, a line after the summary blocks; and values given twice.
ODD_GOODS = b"""<DatiBeniServizi>
  <DettaglioLinee>
    <NumeroLinea>1</NumeroLinea>
    <CodiceArticolo><CodiceTipo>X</CodiceTipo><AliquotaIVA>4.00</AliquotaIVA></CodiceArticolo>
    <Quantita> 2.00 </Quantita>
    <PrezzoUnitario>5.00</PrezzoUnitario>
    <ScontoMaggiorazione><Tipo>SC</Tipo><Importo>1.00</Importo></ScontoMaggiorazione>
    <!-- a comment -->
    <ScontoMaggiorazione><Tipo>MG</Tipo><Natura>N1</Natura></ScontoMaggiorazione>
    <PrezzoTotale>10.00</PrezzoTotale>
    <AliquotaIVA>10.00</AliquotaIVA>
    <AliquotaIVA> 22.00 </AliquotaIVA>
    <Ritenuta>SI</Ritenuta>
    <AltriDatiGestionali>
      <DettaglioLinee><AliquotaIVA>5.00</AliquotaIVA><Natura>N4</Natura></DettaglioLinee>
    </AltriDatiGestionali>
  </DettaglioLinee>
  <DettaglioLinee>
    <NumeroLinea>2</NumeroLinea>
    <PrezzoTotale/>
    <AliquotaIVA>0.00</AliquotaIVA>
    <Natura> N2.1 </Natura>
  </DettaglioLinee>
  <DatiRiepilogo><AliquotaIVA>22.00</AliquotaIVA><Natura>N3.1</Natura></DatiRiepilogo>
  <DettaglioLinee><NumeroLinea>3</NumeroLinea><AliquotaIVA>4.00</AliquotaIVA></DettaglioLinee>
</DatiBeniServizi>"""


def _line_facts_by_children(line):
    """The facts of a line as a plain walk over its children reads them (the last value wins)."""
    found = {"rate": None, "natura": None, "withholding": None, "discounts": []}
    found |= {"quantity": None, "unit_price": None, "total": None}
    amounts = {"Quantita": "quantity", "PrezzoUnitario": "unit_price", "PrezzoTotale": "total"}
    for item in line.iterchildren():
        value = (item.text or "").strip() or None if isinstance(item.tag, str) else None
        if item.tag in amounts:
            found[amounts[item.tag]] = value
        elif item.tag == "AliquotaIVA":
            found["rate"] = decimal(value)
        elif item.tag == "Natura":
            found["natura"] = value
        elif item.tag == "Ritenuta":
            found["withholding"] = value
        elif item.tag == "ScontoMaggiorazione":
            found["discounts"].append(item)
    return found


def test_line_walk_reads_what_a_walk_over_children_reads():
    body = etree.fromstring(b"<FatturaElettronicaBody>" + ODD_GOODS + b"</FatturaElettronicaBody>")
    lines = body.findall("DatiBeniServizi/DettaglioLinee")
    facts = line_facts(body)
    assert [f.element for f in facts] == lines
    for fact, line in zip(facts, lines, strict=True):
        read = {
            "rate": fact.rate,
            "natura": fact.natura,
            "withholding": fact.withholding,
            "discounts": list(fact.discounts),
            "quantity": fact.quantity,
            "unit_price": fact.unit_price,
            "total": fact.total,
        }
        assert read == _line_facts_by_children(line)
    assert facts[0].rate == Decimal("22.00") and facts[0].rate_element is lines[0].findall("AliquotaIVA")[1]
    assert facts[1].natura == "N2.1" and facts[1].natura_element is lines[1].find("Natura")
    assert facts[0].total_element is lines[0].find("PrezzoTotale") and facts[1].total is None


def test_simplified_goods_facts_read_what_find_reads():
    goods = etree.fromstring(
        b"<DatiBeniServizi><Importo> 12.00 </Importo><Importo>1.00</Importo>"
        b"<DatiIVA><Aliquota>0.10</Aliquota></DatiIVA><DatiIVA><Imposta>0.00</Imposta>"
        b"<Aliquota>22.00</Aliquota></DatiIVA><Natura>N2</Natura><Natura>N3</Natura></DatiBeniServizi>"
    )
    facts = simplified._goods_facts(goods)
    assert facts.amount == decimal_at(goods, "Importo") == Decimal("12.00")
    assert facts.tax_element is goods.find("DatiIVA/Imposta")
    assert facts.rate_element is goods.find("DatiIVA/Aliquota")
    assert (facts.tax, facts.rate) == (
        decimal_at(goods, "DatiIVA/Imposta"),
        decimal_at(goods, "DatiIVA/Aliquota"),
    )
    assert facts.natura_element is goods.find("Natura")
    assert facts.vat_text() == "2.2.3.1 <Imposta> 0.00 and 2.2.3.2 <Aliquota> 0.10"


def _split_by_comment(element):
    """`12.50` becomes `1<!-- c -->2.50`: two text nodes, as XPath `text()` sees them."""
    value = element.text
    element.text = value[:1]
    comment = etree.Comment(" c ")
    comment.tail = value[1:]
    element.append(comment)


def _xpath_sum(element, path):
    return sum((Decimal(t) for t in texts_at(element, path)), Decimal("0.00"))


def test_summary_amounts_from_the_facts_are_the_xpath_text_nodes(invoice):
    # The summary reads the amounts through the elements the rules' facts found; a comment inside
    # a value must still split it as `.../text()` does.
    root = etree.fromstring(invoice("FPR12"))
    body = root.find("FatturaElettronicaBody")
    for path in ("DatiBeniServizi/DatiRiepilogo/Imposta", "DatiBeniServizi/DatiRiepilogo/ImponibileImporto"):
        _split_by_comment(body.find(path))
    [found] = check_sync(etree.tostring(root)).summary.bodies
    vat = _xpath_sum(body, "DatiBeniServizi/DatiRiepilogo/Imposta")
    assert found.total_vat == vat
    assert found.total_document == _xpath_sum(body, "DatiBeniServizi/DatiRiepilogo/ImponibileImporto") + vat


def test_simplified_summary_from_the_goods_facts_is_the_xpath_text_nodes(invoice):
    root = etree.fromstring(invoice("FSM10"))
    body = root.find("FatturaElettronicaBody")
    goods = body.find("DatiBeniServizi")
    goods.find("Importo").text = "122.00"
    goods.find("DatiIVA").clear()
    etree.SubElement(goods.find("DatiIVA"), "Imposta").text = "22.00"
    _split_by_comment(goods.find("Importo"))
    report = check_sync(etree.tostring(root))
    assert report.accepted, report.errors
    [found] = report.summary.bodies
    assert found.total_document == _xpath_sum(body, "DatiBeniServizi/Importo") == Decimal("23.00")
    assert found.total_vat == Decimal("22.00")


def test_summary_parties_from_the_rules_look_ups_are_the_header_walks(samples_dir, invoice):
    files = [path.read_bytes() for path in sorted(samples_dir.glob("*.xml"))]
    checked = 0
    for data in [*files, invoice("FPA12"), invoice("FPR12"), invoice("FSM10")]:
        report = check_sync(data)
        if report.summary is None:  # refused by the XSD: no summary
            continue
        header = report.root.find("FatturaElettronicaHeader")
        simplified_format = report.format == "FSM10"
        assert report.summary.supplier == party(header, "supplier", simplified_format)
        assert report.summary.customer == party(header, "customer", simplified_format)
        assert extract_summary(report.root, report.format) == report.summary  # without shared look-ups
        checked += 1
    assert checked >= 5
