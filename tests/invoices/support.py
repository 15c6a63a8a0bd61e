"""Invoice files for upload tests, derived from the validated base corpus."""

from __future__ import annotations

import base64
import uuid
from collections.abc import Callable
from pathlib import Path

from lxml import etree

BASE = Path(__file__).resolve().parents[1] / "fatturapa" / "cases" / "base"
SUPPLIER_VAT = "01234560017"
CLIENT_VAT = "09876540015"


def invoice_xml(
    fmt: str = "FPR12",
    *,
    number: str | None = None,
    supplier_vat: str | None = None,
    edit: Callable[[etree._Element], None] | None = None,
) -> bytes:
    """A valid invoice; a unique number by default so that no two uploads are the same content."""
    root = etree.fromstring((BASE / f"{fmt}.xml").read_bytes())
    for numero in root.iter("Numero"):
        if numero.getparent().tag == "DatiGeneraliDocumento":
            numero.text = number or f"T{uuid.uuid4().hex[:8]}"
    if supplier_vat is not None:
        root.find(
            "FatturaElettronicaHeader/CedentePrestatore/DatiAnagrafici/IdFiscaleIVA/IdCodice"
        ).text = supplier_vat
    if edit is not None:
        edit(root)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def set_text(path: str, value: str) -> Callable[[etree._Element], None]:
    def edit(root: etree._Element) -> None:
        for element in root.iterfind(path):
            element.text = value

    return edit
