"""Fresh, valid invoices for the demo accounts (`varco demo invoice`): the templates in
`invoices/data/examples/` (also in the repository's `examples/`) with this installation's
transmitter, the sending account's VAT number, today's date in Italy and a number never used, so
that each one passes every check of the upload and of the simulated SDI (00404 included)."""

from __future__ import annotations

import uuid
from datetime import datetime
from importlib import resources

from lxml import etree

from varco.invoices.check_cache import receipt_day

FORMATS = ("FPR12", "FPA12", "FSM10", "TD17")
SELF_BILLING = ("TD17",)  # the account is the customer (1.4) and issues on the supplier's behalf


def template(fmt: str) -> bytes:
    return (resources.files("varco.invoices") / "data" / "examples" / f"{fmt}.xml").read_bytes()


def fresh_invoice(
    fmt: str, *, transmitter_id: str, supplier_vat: str, customer_vat: str | None, now: datetime
) -> bytes:
    """The `fmt` template as a new invoice: numbered uniquely, dated today (Italy), from
    `supplier_vat` (11 digits) through `transmitter_id` (IT + code) to `customer_vat` (11 digits;
    None keeps the template's, demo-basic's). A self-billing TD17 is issued by the account as the
    customer: `supplier_vat` goes to 1.4 and its foreign supplier stays (`customer_vat` must be None)."""
    root = etree.fromstring(template(fmt))
    header = root.find("FatturaElettronicaHeader")
    sender = header.find("DatiTrasmissione/IdTrasmittente")
    sender.find("IdPaese").text, sender.find("IdCodice").text = transmitter_id[:2], transmitter_id[2:]
    unique = uuid.uuid4().hex[:10].upper()
    header.find("DatiTrasmissione/ProgressivoInvio").text = unique[:5]
    if fmt in SELF_BILLING:
        assert customer_vat is None, "a self-billing invoice's customer is the issuing account"
        customer_vat, supplier_vat = supplier_vat, None
    if supplier_vat is not None:
        supplier = header.find("CedentePrestatore")
        supplier_id = (
            supplier.find("DatiAnagrafici/IdFiscaleIVA") if fmt != "FSM10" else supplier.find("IdFiscaleIVA")
        )
        supplier_id.find("IdCodice").text = supplier_vat
    if customer_vat is not None:
        customer = header.find("CessionarioCommittente")
        for element in customer.iter("IdCodice", "CodiceFiscale"):
            element.text = customer_vat
    today = receipt_day(now).isoformat()
    for document in root.iter("DatiGeneraliDocumento"):
        document.find("Data").text = today
        document.find("Numero").text = f"D{today.replace('-', '')}-{unique}"  # 00425: digits
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")
