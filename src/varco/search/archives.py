"""ZIP files of an invoice and its notifications, and the invoice XML without its signature."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable

from lxml import etree

from varco.fatturapa.envelope import open_envelope
from varco.fatturapa.errors import FatturaPAError
from varco.fatturapa.parsing import parse_xml
from varco.fatturapa.xades import enveloped_signature


def zip_files(entries: Iterable[tuple[str, bytes]]) -> bytes:
    """A ZIP of (name, content) pairs; names are used as stored, a repeated name is kept once."""
    buffer = io.BytesIO()
    seen: set[str] = set()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in entries:
            if name not in seen:
                seen.add(name)
                archive.writestr(name, content)
    return buffer.getvalue()


def unsigned_xml(content: bytes) -> bytes:
    """The invoice XML: a CAdES .p7m unwrapped, a XAdES signature removed, a plain XML unchanged."""
    try:
        envelope = open_envelope(content)
    except FatturaPAError:
        return content  # stored files passed the upload checks; keep what is there rather than fail
    if envelope.cades is not None:
        return envelope.content
    try:
        root = parse_xml(envelope.content)
    except FatturaPAError:
        return envelope.content
    signature = enveloped_signature(root)
    if signature is None:
        return envelope.content
    signature.getparent().remove(signature)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def unsigned_name(filename: str) -> str:
    """IT..._0000A.xml.p7m -> IT..._0000A.xml."""
    return filename[:-4] if filename.lower().endswith(".p7m") else filename
