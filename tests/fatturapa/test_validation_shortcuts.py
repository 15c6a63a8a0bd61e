"""The shortcuts the checks take for speed give the answers of the slower ways they replace."""

from __future__ import annotations

import pytest
from lxml import etree

from varco.fatturapa.errors import FatturaPAError
from varco.fatturapa.parsing import MAX_ATTRIBUTES, parse_xml, text_at
from varco.fatturapa.parties import string_value
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
