"""XSD validation of financial communications: LI (IVP18, `li/`) and DF (DAT20, `df/`).

The schemas are package data (kept in the agency's own layout: `li/common/main` includes
`../../common`); they compile with no network: the xmldsig import is served from package data.
"""

from __future__ import annotations

import threading
from importlib import resources
from itertools import islice
from pathlib import Path

from lxml import etree

from varco.fatturapa.schema import compile_schema

NS_LI = "urn:www.agenziaentrate.gov.it:specificheTecniche:sco:ivp"
NS_DF = "http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v2.0"
NS_ESITO = "http://ivaservizi.agenziaentrate.gov.it/docs/xsd/file/v2.0"

DATA = resources.files("varco.comfin") / "data"
# comunicationType -> (root tag, schema file)
SCHEMAS: dict[str, tuple[str, str]] = {
    "LI": (f"{{{NS_LI}}}Fornitura", "li/common/main/fornituraIvp_2018_v1.xsd"),
    "DF": (f"{{{NS_DF}}}DatiFattura", "df/DatiFatturav2.0.xsd"),
    "ESITO": (f"{{{NS_ESITO}}}EsitoFile", "DatiFatturaMessaggi_v2.0.xsd"),
}
MAX_ERRORS = 20
_local = threading.local()  # an XMLSchema keeps its error log: one per thread


def schema(kind: str) -> etree.XMLSchema:
    """The compiled schema of LI, DF or ESITO (once per thread)."""
    cache: dict[str, etree.XMLSchema] = _local.__dict__.setdefault("schemas", {})
    if kind not in cache:
        path = Path(str(DATA)) / SCHEMAS[kind][1]
        cache[kind] = compile_schema(path.read_bytes(), str(path))  # includes relative to the file
    return cache[kind]


def kind_of(root: etree._Element) -> str | None:
    """LI or DF by the root element; None for anything else."""
    return next((k for k, (tag, _) in SCHEMAS.items() if tag == root.tag and k != "ESITO"), None)


def errors(root: etree._Element, kind: str) -> list[str]:
    """XSD errors of `root` against `kind`'s schema (empty when valid), at most MAX_ERRORS."""
    xsd = schema(kind)
    if xsd.validate(root.getroottree()):
        return []
    return [f"line {e.line}: {e.message}" for e in islice(xsd.error_log, MAX_ERRORS)]
