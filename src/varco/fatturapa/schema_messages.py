"""XSD failures in plain words: what is wrong, where, and what the schema accepts instead.

libxml2 words a failure for the schema's author ("Element 'DatiRitenuta': This element is not
expected. Expected is ( Numero )."; "'1,OO' is not a valid value of the atomic type
'{...}Amount2DecimalType'"). `explain_errors` classifies each entry of a schema's error log and says
it for the invoice's author: "Numero is missing before DatiRitenuta in /p:FatturaElettronica/...";
"ImportoPagamento at /...: '1,OO' is not valid; expected a number with a dot and exactly 2
decimals ..., e.g. 1220.00". The accepted form of a value comes from the XSD's own types
(`XsdModel`), worded by `_FORMS` (keyed by XSD type name) or, for a type not there, from its facets.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Literal

from lxml import etree

XS = "http://www.w3.org/2001/XMLSchema"
_XS = f"{{{XS}}}"
Kind = Literal["missing", "unexpected", "value", "content", "attribute", "other"]


# --- the XSD, read once per schema -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SimpleType:
    """A simple type's base and facets (FatturaPA's are all restrictions of a built-in type)."""

    name: str
    base: str
    patterns: tuple[str, ...] = ()
    enumerations: tuple[str, ...] = ()
    length: int | None = None
    min_length: int | None = None
    max_length: int | None = None
    min_inclusive: str | None = None
    max_inclusive: str | None = None


@dataclass(frozen=True, slots=True)
class Child:
    """A child element of a complex type, as its content model declares it."""

    name: str
    type: str
    required: bool  # minOccurs >= 1 (a required choice's alternatives count as required)
    max_occurs: int | None  # None: unbounded
    position: int  # order in the content model


@dataclass(frozen=True)
class XsdModel:
    """What the messages need from an XSD: element types along paths and the simple types' facets."""

    roots: dict[str, str]  # global element name -> its type
    children: dict[str, dict[str, Child]]  # complex type -> its child elements by name
    attributes: dict[str, dict[str, str]]  # complex type -> attribute name -> its type
    simple: dict[str, SimpleType]

    def simple_type(self, name: str) -> SimpleType:
        """The named simple type; a built-in (xs:date, ...) as a type without facets."""
        return self.simple.get(name) or SimpleType(name, name)

    def type_of(self, element: etree._Element) -> str | None:
        """The declared type of `element`, following its ancestors' names from the root."""
        steps = [_local(e.tag) for e in (*reversed(list(element.iterancestors())), element)]
        declared = self.roots.get(steps[0])
        for name in steps[1:]:
            child = self.children.get(declared or "", {}).get(name)
            declared = child.type if child else None
        return declared

    def children_of(self, element: etree._Element | None) -> dict[str, Child]:
        """The child elements `element`'s type declares ({} when unknown)."""
        declared = self.type_of(element) if element is not None else None
        return self.children.get(declared or "", {})


def load_model(xsd: bytes) -> XsdModel:
    """Read the element declarations and simple types of a FatturaPA XSD (package data, trusted)."""
    schema = etree.fromstring(xsd, etree.XMLParser(resolve_entities=False, no_network=True))
    roots = {e.get("name"): _type_name(e.get("type")) for e in schema.iterchildren(f"{_XS}element")}
    children: dict[str, dict[str, Child]] = {}
    attributes: dict[str, dict[str, str]] = {}
    for complex_type in schema.iterchildren(f"{_XS}complexType"):
        declared: dict[str, Child] = {}
        for group in complex_type.iterchildren(f"{_XS}sequence", f"{_XS}choice"):
            _read_group(group, True, declared)
        children[complex_type.get("name")] = declared
        attributes[complex_type.get("name")] = {
            a.get("name"): _type_name(a.get("type")) for a in complex_type.iterchildren(f"{_XS}attribute")
        }
    simple = {s.get("name"): _read_simple(s) for s in schema.iterchildren(f"{_XS}simpleType")}
    return XsdModel(roots, children, attributes, simple)


def _read_group(group: etree._Element, required: bool, into: dict[str, Child]) -> None:
    required = required and group.get("minOccurs", "1") != "0"
    for item in group.iterchildren(f"{_XS}element", f"{_XS}sequence", f"{_XS}choice"):
        if item.tag != f"{_XS}element":
            _read_group(item, required, into)
        elif item.get("name") and item.get("name") not in into:
            top = item.get("maxOccurs", "1")
            into[item.get("name")] = Child(
                name=item.get("name"),
                type=_type_name(item.get("type")),
                required=required and item.get("minOccurs", "1") != "0",
                max_occurs=None if top == "unbounded" else int(top),
                position=len(into),
            )


def _read_simple(simple_type: etree._Element) -> SimpleType:
    restriction = simple_type.find(f"{_XS}restriction")
    if restriction is None:  # a list or a union: none in FatturaPA, worded as text
        return SimpleType(simple_type.get("name"), "xs:string")
    facets: dict[str, list[str]] = {}
    for facet in restriction.iterchildren(tag=etree.Element):
        facets.setdefault(_local(facet.tag), []).append(facet.get("value"))

    def one(name: str) -> str | None:
        return facets[name][0] if name in facets else None

    def number(name: str) -> int | None:
        return int(facets[name][0]) if name in facets else None

    return SimpleType(
        name=simple_type.get("name"),
        base=restriction.get("base"),
        patterns=tuple(facets.get("pattern", ())),
        enumerations=tuple(facets.get("enumeration", ())),
        length=number("length"),
        min_length=number("minLength"),
        max_length=number("maxLength"),
        min_inclusive=one("minInclusive"),
        max_inclusive=one("maxInclusive"),
    )


def _type_name(name: str | None) -> str:
    return name or "xs:anyType"


def _local(tag: object) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else str(tag)


# --- accepted forms, by XSD type name ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Form:
    """How to write a value of a type: a noun phrase with an example, and a one-line fix hint."""

    text: str
    hint: str = ""


_AMOUNT_HINT = "Use a dot as the decimal separator and no thousands separator."
_DATE_HINT = "Write the year first, then month and day, with dashes: 2024-12-18, not 18/12/2024."
_ASCII = "ASCII characters (no accented letters, no symbols such as €)"
_LATIN1 = "Latin-1 characters (accented letters such as à are fine; € and other symbols are not)"


def _recipient_code(simple: SimpleType) -> Form:
    if _pattern_count(simple) == "7":  # FSM10: private recipients only
        return Form(
            "7 capital letters or digits, the recipient's SDI code, e.g. ABC1234 (0000000 when it has none)",
            "Copy the recipient's code as it gave it, in capitals; 0000000 when it has none.",
        )
    return Form(
        "6 or 7 capital letters or digits: a public office's 6-character code (e.g. UFY9MH), "
        "otherwise the recipient's 7-character SDI code (e.g. ABC1234, or 0000000 when it has none)",
        "Copy the code as the recipient gave it, in capitals.",
    )


# Types whose plain words the facets alone cannot give (meaning, example). Types not here (the
# String*Type families, enumerations, integers with bounds) are worded from their facets.
_FORMS: dict[str, Form | Callable[[SimpleType], Form]] = {
    "Amount2DecimalType": Form(
        "a number with a dot and exactly 2 decimals (at most 11 digits before the dot, - for a "
        "negative amount), e.g. 1220.00",
        _AMOUNT_HINT,
    ),
    "Amount8DecimalType": Form(
        "a number with a dot and 2 to 8 decimals (at most 11 digits before the dot, - for a "
        "negative amount), e.g. 1220.00 or 0.12345",
        _AMOUNT_HINT,
    ),
    "RateType": Form(
        "a percentage from 0.00 to 100.00 with a dot and exactly 2 decimals, e.g. 22.00",
        "Write the rate as a percentage with 2 decimals (22.00), not as a fraction (0.22).",
    ),
    "QuantitaType": Form(
        "a quantity with a dot and 2 to 8 decimals (at most 12 digits before the dot, not negative), "
        "e.g. 5.00 or 0.125",
        _AMOUNT_HINT,
    ),
    "PesoType": Form("a weight with 1 to 4 digits, a dot and 1 or 2 decimals, e.g. 12.50", _AMOUNT_HINT),
    "xs:decimal": Form("a number with a dot as the decimal separator, e.g. 12.50", _AMOUNT_HINT),
    "xs:integer": Form("a whole number, e.g. 1"),
    "xs:date": Form("a date written YYYY-MM-DD, e.g. 2024-12-18", _DATE_HINT),
    "DataFatturaType": Form("a date written YYYY-MM-DD, not before 1970-01-01, e.g. 2024-12-18", _DATE_HINT),
    "xs:dateTime": Form(
        "a date and time written YYYY-MM-DDThh:mm:ss, e.g. 2024-12-18T10:30:00",
        "Write the date year first with dashes, a T, then the time with colons.",
    ),
    "xs:base64Binary": Form(
        "the attached file in base64 (A-Z a-z 0-9 + / and = padding), e.g. JVBERi0xLjcK",
        "Base64-encode the attached file's bytes.",
    ),
    "CodiceDestinatarioType": _recipient_code,
    "CodiceType": Form(
        "1 to 28 characters: for an Italian party its 11-digit VAT number (partita IVA), e.g. 01234567890",
        "Write the VAT number without the country prefix, which goes in IdPaese.",
    ),
    "CodiceFiscaleType": Form(
        "11 to 16 capital letters or digits: a person's tax code (e.g. RSSMRA80A01H501U) or a "
        "company's 11 digits (e.g. 01234567890)",
        "Write the codice fiscale in capitals, without spaces or a country prefix.",
    ),
    "CodiceFiscalePFType": Form(
        "16 capital letters or digits, a person's tax code, e.g. RSSMRA80A01H501U",
        "Write the codice fiscale in capitals, without spaces.",
    ),
    "CAPType": Form("5 digits, an Italian postcode, e.g. 00145 (00000 for an address abroad)"),
    "ABIType": Form("5 digits, the bank's ABI code, e.g. 03069"),
    "CABType": Form("5 digits, the branch's CAB code, e.g. 05034"),
    "ProvinciaType": Form("2 capital letters, an Italian province, e.g. RM", "Use the province's sigla."),
    "NazioneType": Form(
        "2 capital letters, an ISO 3166-1 alpha-2 country code, e.g. IT",
        "Use the two-letter country code (IT, DE, FR...), not the three-letter one.",
    ),
    "DivisaType": Form("3 capital letters, an ISO 4217 currency code, e.g. EUR"),
    "TipoResaType": Form("3 capital letters, an Incoterms code, e.g. EXW"),
    "IBANType": Form(
        "an IBAN without spaces: 2 letters, 2 digits, then 11 to 30 letters or digits, "
        "e.g. IT60X0542811101000000123456",
        "Remove the spaces from the IBAN.",
    ),
    "BICType": Form("a BIC (SWIFT) code of 8 or 11 capital letters and digits, e.g. BCITITMM"),
    "CodEORIType": Form("13 to 17 characters, an EORI number, e.g. IT01234567890001"),
    "EmailType": Form("an e-mail address of at most 256 characters, e.g. fatture@example.it"),
    "EmailContattiType": Form("an e-mail address of 7 to 256 characters, e.g. fatture@example.it"),
    "TelFaxType": Form(f"5 to 12 {_ASCII}, e.g. 0612345678"),
    "TitoloType": Form(f"2 to 10 {_ASCII}, e.g. DOTT."),
    "NumeroCivicoType": Form(f"1 to 8 {_ASCII}, e.g. 12/B"),
    "GiorniTerminePagamentoType": Form("a number of days from 0 to 999, e.g. 30"),
}

_MAX_LISTED = 200  # characters of an enumeration's listed values before "..."
_INTEGERS = ("xs:integer", "xs:int", "xs:nonNegativeInteger", "xs:positiveInteger")


def accepted_form(simple: SimpleType) -> Form:
    """The plain words for what `simple` accepts: `_FORMS`, else worded from its facets."""
    known = _FORMS.get(simple.name)
    if known is not None:
        return known(simple) if callable(known) else known
    if simple.enumerations:
        values = simple.enumerations
        if len(values) == 1:
            return Form(f"exactly {values[0]}", f"Write {values[0]}, or leave the element out.")
        return Form(f"one of {_listed(values)}", "Use one of the listed codes, as written.")
    if simple.base in _INTEGERS and (simple.min_inclusive or simple.max_inclusive):
        low, high = simple.min_inclusive or "0", simple.max_inclusive
        span = f"from {low} to {high}" if high else f"of at least {low}"
        return Form(f"a whole number {span}, e.g. {low}")
    if simple.patterns:
        worded = _pattern_form(simple.patterns[0])
        if worded is not None:
            return worded
    if simple.length is not None:
        return Form(f"exactly {simple.length} characters")
    if simple.min_length is not None or simple.max_length is not None:
        return Form(
            f"{simple.min_length or 0} to {simple.max_length} characters"
            if simple.max_length is not None
            else f"at least {simple.min_length} characters"
        )
    base = _FORMS.get(simple.base)
    if isinstance(base, Form):
        return base
    if simple.patterns:
        return Form(f"text matching the pattern {simple.patterns[0]}")
    return Form("text")


_CLASSES = {
    r"\p{IsBasicLatin}": _ASCII,
    r"[\p{IsBasicLatin}\p{IsLatin-1Supplement}]": _LATIN1,
    "[A-Z]": "capital letters",
    "[0-9]": "digits",
    "[A-Z0-9]": "capital letters or digits",
    "[a-zA-Z]": "letters",
    "[a-zA-Z0-9]": "letters or digits",
}
_SIMPLE_PATTERN = re.compile(r"\(?(?P<cls>\\p\{\w+\}|\[[^\]]+\])\{(?P<low>\d+)(?:,(?P<high>\d+))?\}\)?")


_TOP_CHARACTER = {r"\p{IsBasicLatin}": 0x7F, r"[\p{IsBasicLatin}\p{IsLatin-1Supplement}]": 0xFF}
_CLASS_HINTS = {
    r"\p{IsBasicLatin}": "Keep to the length, and write accented letters as plain ones (à as a').",
    r"[\p{IsBasicLatin}\p{IsLatin-1Supplement}]": (
        "Keep to the length, and replace characters beyond Latin-1 (€ as EUR, curly quotes as straight ones)."
    ),
}


def _pattern_form(pattern: str) -> Form | None:
    """Words for a pattern of one class and a count: `[A-Z0-9]{6,7}` -> 6 or 7 capital letters or
    digits. None for a pattern of another shape."""
    match = _SIMPLE_PATTERN.fullmatch(pattern)
    if match is None or match["cls"] not in _CLASSES:
        return None
    words = f"{_count(match['low'], match['high'])} {_CLASSES[match['cls']]}"
    return Form(words, _CLASS_HINTS.get(match["cls"], ""))


def _pattern_count(simple: SimpleType) -> str | None:
    match = _SIMPLE_PATTERN.fullmatch(simple.patterns[0]) if simple.patterns else None
    return _count(match["low"], match["high"]) if match else None


def _count(low: str, high: str | None) -> str:
    if high is None or high == low:
        return low
    return f"{low} or {high}" if int(high) == int(low) + 1 else f"{low} to {high}"


def _listed(values: Iterable[str]) -> str:
    values = list(values)
    shown: list[str] = []
    for value in values:
        if sum(len(v) + 2 for v in shown) + len(value) > _MAX_LISTED:
            return f"{', '.join(shown)}, ... ({len(values)} values, see the FatturaPA specification)"
        shown.append(value)
    return ", ".join(shown)


# --- one explanation per failure ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Explanation:
    """One XSD failure in plain words: the message (with the path), where, and a fix hint."""

    kind: Kind
    line: int
    message: str
    xpath: str | None
    hint: str
    facet: str | None = field(default=None, compare=False)  # value failures: which facet failed


_SUBJECT = re.compile(
    r"Element '(?P<element>[^']+)'(?:, attribute '(?P<attribute>[^']+)')?: (?P<rest>.*)", re.S
)
_EXPECTED = r"Expected is (?:one of )?\( (?P<expected>.*) \)\."
_NOT_EXPECTED = re.compile(rf"This element is not expected\.(?: {_EXPECTED})?")
_MISSING = re.compile(rf"Missing child element\(s\)\. {_EXPECTED}")
_TEXT_IN_ELEMENTS = "Character content other than whitespace is not allowed"
_ELEMENTS_IN_VALUE = "Element content is not allowed"
_FACET = re.compile(r"\[facet '(?P<facet>\w+)'\] (?P<detail>.*)", re.S)
_NOT_VALID = re.compile(
    r"'(?P<value>.*)' is not a valid value of the (?:local )?\w+ type '(?P<type>[^']+)'\.?", re.S
)
_ATTRIBUTE_NOT_ALLOWED = re.compile(r"The attribute '[^']+' is not allowed\.")
_ATTRIBUTE_MISSING = re.compile(r"The attribute '(?P<attribute>[^']+)' is required but missing\.")
_LIMIT = re.compile(r"'(?P<limit>[^']*)'\)?\.$")  # the facet's bound, last in libxml2's detail
_NAMESPACE = re.compile(r"\{[^}]*\}")
_SHOWN = 40  # characters of a value quoted in a message


def explain_errors(
    entries: Iterable[etree._LogEntry], root: etree._Element, model: XsdModel
) -> list[Explanation]:
    """One explanation per failure, in the log's order. libxml2 reports a value failing two facets
    (length, then enumeration) as two entries: they become one, the more telling."""
    locate = _Locator(root)
    explained: list[Explanation] = []
    last_value_key: tuple[object, ...] | None = None
    for entry in entries:
        explanation = explain(entry, locate(entry), model)
        key = (entry.path, entry.line, _attribute_of(entry))
        if explanation.kind == "value" and key == last_value_key:
            if explanation.facet == "enumeration" and explained[-1].facet != "enumeration":
                explained[-1] = explanation
            continue
        last_value_key = key if explanation.kind == "value" else None
        explained.append(explanation)
    return explained


def explain(entry: etree._LogEntry, element: etree._Element | None, model: XsdModel) -> Explanation:
    """One libxml2 schema error in plain words. `element` is the element it names (None if not found)."""
    subject = _SUBJECT.fullmatch(entry.message.strip())
    path = entry.path or (element.getroottree().getpath(element) if element is not None else None)
    if subject is None:
        return _other(entry, path)
    name = _local_name(subject["element"])
    rest, attribute = subject["rest"].strip(), subject["attribute"]
    ctx = _Context(entry.line, name, path, element, model)
    if attribute is not None:
        return _attribute(ctx, attribute, rest)
    if match := _ATTRIBUTE_MISSING.fullmatch(rest):
        return _attribute(ctx, match["attribute"], rest)
    if match := _NOT_EXPECTED.fullmatch(rest):
        return _unexpected(ctx, _names(match["expected"]), subject["element"])
    if match := _MISSING.fullmatch(rest):
        return _missing_at_end(ctx, _names(match["expected"]))
    if rest.startswith(_TEXT_IN_ELEMENTS):
        return _text_among_elements(ctx)
    if rest.startswith(_ELEMENTS_IN_VALUE):
        form = accepted_form(model.simple_type(ctx.type or "xs:string"))
        return ctx.explained(
            "value",
            f"{name} at {path} holds child elements, but it takes only a value: {form.text}",
            f"Write the value of {name} as text, without elements inside it.",
            facet="content",
        )
    if (match := _FACET.fullmatch(rest)) or (match := _NOT_VALID.fullmatch(rest)):
        return _value(ctx, match, ctx.type)
    return _other(entry, path)


@dataclass(frozen=True, slots=True)
class _Context:
    line: int
    name: str  # local name of the element the entry names
    path: str | None
    element: etree._Element | None
    model: XsdModel

    @property
    def type(self) -> str | None:
        return self.model.type_of(self.element) if self.element is not None else None

    def explained(
        self, kind: Kind, message: str, hint: str, *, xpath: str | None = None, facet: str | None = None
    ) -> Explanation:
        return Explanation(kind, self.line, message, xpath or self.path, hint, facet)


_ORDER_HINT = "Check the names, the order and the number of the elements against the FatturaPA specification."


def _unexpected(ctx: _Context, expected: list[str], qualified: str) -> Explanation:
    """An element the content model does not expect: something missing before it, out of order,
    repeated, misspelt, or in a namespace."""
    element, name, path = ctx.element, ctx.name, ctx.path
    parent = element.getparent() if element is not None else None
    parent_path = _parent_path(path)
    parent_name = _local(parent.tag) if parent is not None else "its parent"
    declared = ctx.model.children_of(parent)
    child = declared.get(name)
    here = f"; expected here: {_or(expected)}" if expected else ""
    if element is None:  # not found in the tree (never seen): libxml2's facts, reworded
        return ctx.explained("unexpected", f"{name} at {path} is not expected here{here}", _ORDER_HINT)
    if qualified.startswith("{") and name in expected:
        namespace = etree.QName(qualified).namespace
        return ctx.explained(
            "unexpected",
            f"{name} at {path} is in the namespace {namespace}; expected {name} without a namespace "
            "(only the root element is in the FatturaPA namespace)",
            "Declare the FatturaPA namespace with a prefix on the root only: <p:FatturaElettronica "
            "xmlns:p=...>, and write the inner elements without a prefix.",
        )
    if child is None:  # not an element of this parent: misspelt, misplaced or made up
        guess = _closest(name, declared) if declared else None
        did_you_mean = f" (did you mean {guess}?)" if guess else ""
        return ctx.explained(
            "unexpected",
            f"{name} at {path} is not an element of {parent_name}{did_you_mean}{here}",
            "Check the element's name (names are case-sensitive) and its place against the FatturaPA "
            "specification.",
        )
    before = list(element.itersiblings(etree.Element, preceding=True))
    same = sum(1 for s in before if s.tag == element.tag)
    if child.max_occurs is not None and same >= child.max_occurs:
        most = "only one" if child.max_occurs == 1 else f"at most {child.max_occurs}"
        return ctx.explained(
            "unexpected",
            f"{name} at {path} is repeated: {parent_name} takes {most} {name}",
            f"Remove the extra {name}.",
        )
    required = [n for n in expected if n != name and n in declared and declared[n].required]
    after = {_local(s.tag) for s in element.itersiblings(etree.Element)}
    later = [n for n in required if n in after]
    if later:
        return ctx.explained(
            "unexpected",
            f"{name} at {path} is out of order: {later[0]} must come before it",
            f"Put the elements of {parent_name} in the schema's order.",
        )
    if required:
        missing = _or(required)
        return ctx.explained(
            "missing",
            f"{missing} is missing before {name} in {parent_path}",
            f"Add {missing} to {parent_name}, before {name}.",
            xpath=parent_path,
        )
    follows = [_local(s.tag) for s in reversed(before) if _local(s.tag) in declared]
    late = [n for n in follows if declared[n].position > child.position]
    if late:
        return ctx.explained(
            "unexpected",
            f"{name} at {path} is out of order: it must come before {late[0]}",
            f"Put the elements of {parent_name} in the schema's order.",
        )
    return ctx.explained("unexpected", f"{name} at {path} is not expected here{here}", _ORDER_HINT)


def _missing_at_end(ctx: _Context, expected: list[str]) -> Explanation:
    """libxml2's "Missing child element(s)": the element ended before a required child."""
    declared = ctx.model.children_of(ctx.element)
    required = [n for n in expected if n in declared and declared[n].required] or expected
    missing = _or(required)
    elements = list(ctx.element.iterchildren(tag=etree.Element)) if ctx.element is not None else None
    if elements is None:
        where = ""
    else:
        where = f", after {_local(elements[-1].tag)}" if elements else " (it has no child elements)"
    return ctx.explained(
        "missing",
        f"{missing} is missing in {ctx.path}{where}",
        f"Add {missing} to {ctx.name}.",
    )


def _text_among_elements(ctx: _Context) -> Explanation:
    texts = []
    if ctx.element is not None:
        texts = [t.strip() for t in (ctx.element.text, *(c.tail for c in ctx.element)) if t and t.strip()]
    shown = f" {_shown(texts[0])}" if texts else ""
    return ctx.explained(
        "content",
        f"{ctx.name} at {ctx.path} holds the text{shown} between its elements, but takes only elements",
        f"Remove the text from {ctx.name}, or move it into the element it belongs to.",
    )


def _attribute(ctx: _Context, attribute: str, rest: str) -> Explanation:
    if _ATTRIBUTE_NOT_ALLOWED.fullmatch(rest):
        return ctx.explained(
            "attribute",
            f"attribute {attribute} is not allowed on {ctx.name} at {ctx.path}",
            f"Remove the attribute {attribute}.",
        )
    declared = ctx.model.attributes.get(ctx.type or "", {}).get(attribute)
    if _ATTRIBUTE_MISSING.fullmatch(rest):
        accepted = f" ({accepted_form(ctx.model.simple_type(declared)).text})" if declared else ""
        return ctx.explained(
            "attribute",
            f"{ctx.name} at {ctx.path} lacks the required attribute {attribute}{accepted}",
            f"Add the attribute {attribute} to {ctx.name}.",
        )
    if (match := _FACET.fullmatch(rest)) or (match := _NOT_VALID.fullmatch(rest)):
        return _value(replace(ctx, name=f"attribute {attribute} of {ctx.name}"), match, declared, attribute)
    message = f"attribute {attribute} of {ctx.name} at {ctx.path}: {_clean(rest)}"
    return ctx.explained("attribute", message, f"Correct the attribute {attribute}.")


def _value(
    ctx: _Context, match: re.Match[str], declared: str | None, attribute: str | None = None
) -> Explanation:
    """A value its type refuses: what is wrong with it, then the accepted form."""
    groups = match.groupdict()
    facet = groups.get("facet") or "type"
    simple = ctx.model.simple_type(declared or _local_name(groups.get("type") or "xs:string"))
    value = _value_of(ctx.element, attribute, groups.get("value") or groups.get("detail", ""))
    form = accepted_form(simple)
    problem = _problem(facet, value, simple, groups.get("detail") or "")
    return ctx.explained(
        "value",
        f"{ctx.name} at {ctx.path}: {problem}; expected {form.text}",
        form.hint or f"Write {ctx.name} in the accepted form.",
        facet=facet,
    )


def _problem(facet: str, value: str | None, simple: SimpleType, detail: str) -> str:
    """What is wrong with `value`, in words: empty, too long, a character not accepted, ..."""
    if value is None:
        return "the value is not accepted"
    shown = _shown(value)
    if not value.strip() and facet in ("type", "pattern", "minLength", "length", "enumeration"):
        return "the value is empty"
    limit = _LIMIT.search(detail)
    match facet:
        case "enumeration":
            guess = _suggest(value, simple.enumerations)
            return f"{shown} is not an accepted value" + (f" (did you mean {guess}?)" if guess else "")
        case "length" | "minLength" | "maxLength":
            need = limit["limit"] if limit else "?"
            relation = {"length": "not", "minLength": "fewer than", "maxLength": "more than"}[facet]
            return f"{shown} has {len(value)} characters, {relation} {need}"
        case "minInclusive":
            return f"{shown} is less than the minimum, {limit['limit'] if limit else simple.min_inclusive}"
        case "maxInclusive":
            return f"{shown} is more than the maximum, {limit['limit'] if limit else simple.max_inclusive}"
        case "pattern":
            return _pattern_problem(shown, value, simple)
    return f"{shown} is not valid"


def _pattern_problem(shown: str, value: str, simple: SimpleType) -> str:
    """For a pattern of one character class and a count (codes, the String*Type families): which
    of length or characters it refused."""
    match = _SIMPLE_PATTERN.fullmatch(simple.patterns[0]) if simple.patterns else None
    if match is not None:
        low, high = int(match["low"]), int(match["high"] or match["low"])
        if len(value) > high:
            return f"{shown} has {len(value)} characters, more than {high}"
        if len(value) < low:
            return f"{shown} has {len(value)} characters, fewer than {low}"
        top = _TOP_CHARACTER.get(match["cls"])
        outside = next((c for c in value if ord(c) > top), None) if top else None
        if outside is not None:
            which = "an ASCII" if top == 0x7F else "a Latin-1"
            return f"{shown} contains {outside!r}, which is not {which} character"
    guess = _tidied(value, simple.patterns)
    return f"{shown} is not accepted" + (f" (did you mean {guess}?)" if guess else "")


def _tidied(value: str, patterns: tuple[str, ...]) -> str | None:
    """`value` in capitals and without spaces, when that is what the pattern wants (eur, IBANs)."""
    tidied = re.sub(r"\s+", "", value).upper()
    if tidied == value or not patterns or "\\p{" in patterns[0]:
        return None
    try:
        return tidied if re.fullmatch(patterns[0], tidied) else None
    except re.error:  # an XSD regex Python reads differently
        return None


def _suggest(value: str, values: tuple[str, ...]) -> str | None:
    """The accepted value `value` was likely meant as: other case, or digits without the zero."""
    for candidate in (value.strip().upper(), re.sub(r"\d+", lambda m: m[0].zfill(2), value.strip().upper())):
        if candidate in values and candidate != value:
            return candidate
    return None


def _other(entry: etree._LogEntry, path: str | None) -> Explanation:
    message = _clean(entry.message)
    where = f" (at {path})" if path else ""
    return Explanation("other", entry.line, f"{message}{where}", path, "Make the element match the schema.")


# --- helpers -----------------------------------------------------------------------------------


class _Locator:
    """The element an error log entry names, found by following its path (libxml2's xmlGetNodePath:
    `prefix:Name` or `Name` with `[n]` among same-named siblings, `*[n]` among all for an element in
    a default namespace). Each parent's children are grouped once: a file of 100,000 lines on one
    line costs one pass, where matching getpath (which scans siblings) against every element
    would cost a pass per element."""

    _STEP = re.compile(r"(?:(?P<prefix>[^/:\[]+):)?(?P<name>[^/:\[]+)(?:\[(?P<index>\d+)\])?")

    def __init__(self, root: etree._Element) -> None:
        self._root = root
        self._groups: dict[str, dict[tuple[str | None, str], list[etree._Element]]] = {}

    def __call__(self, entry: etree._LogEntry) -> etree._Element | None:
        steps = (entry.path or "").split("/")
        if len(steps) < 2 or steps[0] != "":
            return None
        element, path = None, ""
        for step in steps[1:]:
            match = self._STEP.fullmatch(step)
            if match is None:
                return None
            index = int(match["index"] or 1)
            if element is None:  # the root
                found = [self._root] if step.split("[")[0] in (self._step_name(self._root), "*") else []
            else:
                found = self._children(element, path).get((match["prefix"], match["name"]), [])
            if len(found) < index:
                return None
            element, path = found[index - 1], f"{path}/{step}"
        return element

    def _children(
        self, parent: etree._Element, path: str
    ) -> dict[tuple[str | None, str], list[etree._Element]]:
        if path not in self._groups:
            groups: dict[tuple[str | None, str], list[etree._Element]] = {}
            for child in parent.iterchildren(tag=etree.Element):
                groups.setdefault((None, "*"), []).append(child)  # "*" counts every element
                if (key := self._key(child)) != (None, "*"):
                    groups.setdefault(key, []).append(child)
            self._groups[path] = groups
        return self._groups[path]

    @staticmethod
    def _key(element: etree._Element) -> tuple[str | None, str]:
        """(prefix, name) as the path writes it: (None, "*") for an element in a default namespace."""
        qname = etree.QName(element)
        if qname.namespace is None:
            return (None, qname.localname)
        return (element.prefix, qname.localname) if element.prefix else (None, "*")

    @classmethod
    def _step_name(cls, element: etree._Element) -> str:
        prefix, name = cls._key(element)
        return f"{prefix}:{name}" if prefix else name


def _attribute_of(entry: etree._LogEntry) -> str | None:
    subject = _SUBJECT.fullmatch(entry.message.strip())
    return subject["attribute"] if subject else None


def _names(expected: str | None) -> list[str]:
    return [n.strip() for n in (expected or "").split(",") if n.strip()]


def _local_name(name: str) -> str:
    return _NAMESPACE.sub("", name)


def _parent_path(path: str | None) -> str | None:
    """The parent's path: xmlGetNodePath joins the ancestors' steps, so the path less its last."""
    return path.rpartition("/")[0] or None if path else None


def _or(names: list[str]) -> str:
    names = [_local_name(n) if not n.startswith("##") else "an element of another namespace" for n in names]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _closest(name: str, declared: dict[str, Child]) -> str | None:
    by_case = {n.lower(): n for n in declared}
    if name.lower() in by_case:
        return by_case[name.lower()]
    close = difflib.get_close_matches(name, list(declared), n=1, cutoff=0.75)
    return close[0] if close else None


def _value_of(element: etree._Element | None, attribute: str | None, fallback: str) -> str | None:
    """The value the schema refused: the attribute's or the element's text; else libxml2's quote."""
    if element is not None and attribute:
        return element.get(attribute)
    if element is not None:
        return element.text or ""
    quoted = re.match(r"The value '(.*)' ", fallback, re.S)
    return quoted[1] if quoted else None


def _shown(value: str) -> str:
    return f"'{value}'" if len(value) <= _SHOWN else f"'{value[:_SHOWN]}...'"


def _clean(message: str) -> str:
    """libxml2's text without namespace URIs in braces."""
    return _NAMESPACE.sub("", message.strip())
