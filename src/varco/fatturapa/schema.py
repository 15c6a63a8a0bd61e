"""XSD validation: the root element picks the schema (FatturaPA 1.2.3 or FSM10 1.0.2)."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import islice
from pathlib import Path

from lxml import etree

from varco.fatturapa.findings import Finding
from varco.fatturapa.parsing import xpath_of
from varco.fatturapa.schema_messages import Explanation, XsdModel, explain_errors, load_model

NS_ORDINARY = "http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2"
NS_SIMPLIFIED = "http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.0"
MAX_XSD_FINDINGS = 100  # a file broken on every line would otherwise yield thousands


@dataclass(frozen=True)
class SchemaSpec:
    file: str
    label: str
    formats: tuple[str, ...]  # the values `versione` may take


SCHEMAS: dict[str, SchemaSpec] = {
    f"{{{NS_ORDINARY}}}FatturaElettronica": SchemaSpec(
        "Schema_VFPA12_V1.2.3.xsd", "FatturaPA 1.2.3", ("FPA12", "FPR12")
    ),
    f"{{{NS_SIMPLIFIED}}}FatturaElettronicaSemplificata": SchemaSpec(
        "Schema_VFSM10_v1.0.2.xsd", "FatturaPA semplificata FSM10 1.0.2", ("FSM10",)
    ),
}

_XSD_DIR = resources.files("varco.fatturapa") / "data" / "xsd"
_local = threading.local()  # an XMLSchema keeps its error log on the object: one per thread
# lxml swaps libxml2's process-wide document loader in and out around every parse and schema
# compilation. Two threads compiling at once can leave the wrong loader installed, so compiles take
# turns (validating with compiled schemas stays parallel); and a parse that another thread ends
# during a compile can put libxml2's own loader back mid-compile, which then cannot resolve the
# xmldsig import ("QName ... xmldsig#}Signature does not resolve"). So a schema's own xmldsig
# import points at the packaged copy by file path, which any loader can read, and a compile that
# still fails that way (an import inside an included file) is tried again.
_compile_lock = threading.Lock()
_COMPILE_ATTEMPTS = 3
_BODY = re.compile(r"/FatturaElettronicaBody(?:\[(\d+)\])?")
_XMLDSIG_URL = b"http://www.w3.org/TR/2002/REC-xmldsig-core-20020212/xmldsig-core-schema.xsd"


class _PackagedXmldsig(etree.Resolver):
    """Serve the xmldsig import from package data: compiling a schema never touches the network."""

    def resolve(self, system_url, public_id, context):  # type: ignore[no-untyped-def]
        if system_url and system_url.endswith("xmldsig-core-schema.xsd"):
            return self.resolve_string((_XSD_DIR / "xmldsig-core-schema.xsd").read_bytes(), context)
        return None


def with_packaged_xmldsig(xsd: bytes) -> bytes:
    """The XSD with its xmldsig import pointing at the packaged copy by file path."""
    local = Path(str(_XSD_DIR / "xmldsig-core-schema.xsd")).resolve().as_uri().encode()
    return xsd.replace(_XMLDSIG_URL, local)


def compile_schema(xsd: bytes, base_url: str) -> etree.XMLSchema:
    """Compile an XSD (its includes relative to `base_url`, the xmldsig import from package data,
    no network); every varco schema is compiled through here, one at a time."""
    xsd = with_packaged_xmldsig(xsd)
    with _compile_lock:
        for attempt in range(1, _COMPILE_ATTEMPTS + 1):
            parser = etree.XMLParser(no_network=True, resolve_entities=False, load_dtd=False)
            parser.resolvers.add(_PackagedXmldsig())
            try:
                return etree.XMLSchema(etree.fromstring(xsd, parser, base_url=base_url))
            except etree.XMLSchemaParseError:
                if attempt == _COMPILE_ATTEMPTS:
                    raise
    raise AssertionError("unreachable")


def schema_for(root_tag: str) -> etree.XMLSchema | None:
    """The compiled schema for a root element tag, compiled once per thread; None if unknown."""
    spec = SCHEMAS.get(root_tag)
    if spec is None:
        return None
    cache: dict[str, etree.XMLSchema] = _local.__dict__.setdefault("schemas", {})
    if spec.file not in cache:
        cache[spec.file] = compile_schema((_XSD_DIR / spec.file).read_bytes(), spec.file)
    return cache[spec.file]


def declared_format(root: etree._Element) -> str | None:
    """The `versione` attribute when it names a format of the root's schema."""
    spec = SCHEMAS.get(root.tag)
    versione = root.get("versione")
    return versione if spec is not None and versione in spec.formats else None


@cache
def xsd_model(file: str) -> XsdModel:
    """The element types and simple types of a packaged XSD, for the messages (read once)."""
    return load_model((_XSD_DIR / file).read_bytes())


def validate_schema(root: etree._Element) -> list[Finding]:
    """0092 findings, one per XSD failure, in plain words (schema_messages): what is wrong, the
    line, the path of the offending element (of the parent, for a missing one), and a fix hint."""
    schema = schema_for(root.tag)
    if schema is None:
        expected = " or ".join(SCHEMAS)
        return [
            Finding(
                code="0092",
                message=f"line {root.sourceline}: root element {root.tag} is not an invoice "
                f"(expected {expected})",
                stage="sync",
                xpath=xpath_of(root),
                hint="Send a FatturaElettronica (1.2) or FatturaElettronicaSemplificata (1.0) document.",
            )
        ]
    if schema.validate(root.getroottree()):
        return []
    spec = SCHEMAS[root.tag]
    label = spec.label
    log = schema.error_log
    explained = explain_errors(islice(log, MAX_XSD_FINDINGS), root, xsd_model(spec.file))
    findings = [_finding(explanation, label) for explanation in explained]
    if len(log) > MAX_XSD_FINDINGS:
        findings.append(
            Finding(
                code="0092",
                message=f"... and {len(log) - MAX_XSD_FINDINGS} more {label} XSD errors",
                stage="sync",
                hint="Fix the errors above and validate again.",
            )
        )
    return findings


def _finding(explanation: Explanation, label: str) -> Finding:
    body = _BODY.search(explanation.xpath or "")
    return Finding(
        code="0092",
        message=f"{label} XSD: line {explanation.line}: {explanation.message}",
        stage="sync",
        xpath=explanation.xpath or None,
        body=int(body.group(1) or 1) if body else None,
        hint=explanation.hint or f"Make the element match the {label} schema.",
    )
