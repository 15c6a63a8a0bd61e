"""Shared helpers for the extra-schema rule corpus in `cases/`: XSD validation, parsing, manifest.

Self-contained on purpose (lxml and the packaged XSDs only), so the corpus does not depend on the
rest of `varco.fatturapa` being finished.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date
from functools import cache
from importlib import resources
from pathlib import Path

from lxml import etree

CASES_DIR = Path(__file__).parent / "cases"
MANIFEST = CASES_DIR / "manifest.json"

# The fixed reception day of the corpus (rule 00403): every base is dated on or before 2026-11-01.
RECEIVED_DATE = date(2026, 11, 23)

XSD_FILES = {
    "FPA12": "Schema_VFPA12_V1.2.3.xsd",
    "FPR12": "Schema_VFPA12_V1.2.3.xsd",
    "FSM10": "Schema_VFSM10_v1.0.2.xsd",
}

# Every asynchronous code of §7.3: the corpus must break each at least once.
ASYNC_CODES = frozenset(
    "00305 00306 00400 00401 00403 00411 00413 00415 00417 00418 00419 00420 00424 00425 00427 00428 "
    "00429 00430 00437 00438 00443 00444 00445 00460 00471 00472 00473 00474 00475 00476".split()
)


def _xsd_dir() -> Path:
    return Path(str(resources.files("varco.fatturapa") / "data" / "xsd"))


class _LocalXmlDsig(etree.Resolver):
    """Maps the xmldsig import (an http URL in the FatturaPA XSDs) to the packaged copy."""

    def resolve(self, system_url: str, public_id: str, context: object) -> object:
        if system_url.endswith("xmldsig-core-schema.xsd"):
            return self.resolve_filename(str(_xsd_dir() / "xmldsig-core-schema.xsd"), context)
        return None


@cache
def schema(fmt: str) -> etree.XMLSchema:
    """The compiled XSD of a format, offline."""
    parser = etree.XMLParser(no_network=True)
    parser.resolvers.add(_LocalXmlDsig())
    document = etree.parse(str(_xsd_dir() / XSD_FILES[fmt]), parser)
    return etree.XMLSchema(document)


def parse(path: Path) -> etree._Element:
    """Parse an invoice file safely (no network, no entity expansion), keeping source lines."""
    parser = etree.XMLParser(no_network=True, resolve_entities=False)
    return etree.parse(str(path), parser).getroot()


def xsd_errors(root: etree._Element, fmt: str) -> list[str]:
    """XSD errors of a parsed invoice, empty when valid."""
    validator = schema(fmt)
    if validator.validate(root.getroottree()):
        return []
    return [f"line {error.line}: {error.message}" for error in validator.error_log]


@dataclass(frozen=True)
class Case:
    """One manifest entry: a file, its format and the codes `run_rules` must report for it."""

    file: str  # relative to CASES_DIR
    format: str
    expect: tuple[str, ...]
    body: int | None
    why: str

    @property
    def path(self) -> Path:
        return CASES_DIR / self.file

    @property
    def id(self) -> str:
        return Path(self.file).stem


def load_manifest() -> list[Case]:
    entries = json.loads(MANIFEST.read_text(encoding="utf-8"))
    return [
        Case(entry["file"], entry["format"], tuple(entry["expect"]), entry.get("body"), entry["why"])
        for entry in entries
    ]
