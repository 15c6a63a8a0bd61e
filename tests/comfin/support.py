"""Minimal valid financial communications (LI IVP18, DF DAT20), signed CAdES with a test CA."""

from __future__ import annotations

import base64
import io
import zipfile

from pyhanko.sign import signers

from varco.core.coroutines import run_sync

SUPPLIER_VAT = "01234560017"  # a valid VAT number: also the company's tax code
OTHER_VAT = "09876540015"


def li_xml(cf: str = SUPPLIER_VAT, *, year: str = "2026", vat: str | None = None) -> bytes:
    """A regular VAT payment communication (Comunicazione liquidazioni periodiche IVA, IVP18)."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<iv:Fornitura xmlns:iv="urn:www.agenziaentrate.gov.it:specificheTecniche:sco:ivp">
  <iv:Intestazione><iv:CodiceFornitura>IVP18</iv:CodiceFornitura></iv:Intestazione>
  <iv:Comunicazione identificativo="00001">
    <iv:Frontespizio>
      <iv:CodiceFiscale>{cf}</iv:CodiceFiscale>
      <iv:AnnoImposta>{year}</iv:AnnoImposta>
      <iv:PartitaIVA>{vat or cf}</iv:PartitaIVA>
      <iv:FirmaDichiarazione>1</iv:FirmaDichiarazione>
    </iv:Frontespizio>
    <iv:DatiContabili>
      <iv:Modulo>
        <iv:NumeroModulo>1</iv:NumeroModulo>
        <iv:Mese>9</iv:Mese>
        <iv:TotaleOperazioniAttive>1000,00</iv:TotaleOperazioniAttive>
        <iv:IvaEsigibile>220,00</iv:IvaEsigibile>
        <iv:IvaDovuta>220,00</iv:IvaDovuta>
      </iv:Modulo>
    </iv:DatiContabili>
  </iv:Comunicazione>
</iv:Fornitura>
""".encode()


def df_xml(vat: str = SUPPLIER_VAT, *, client_vat: str = OTHER_VAT) -> bytes:
    """An invoice data communication (DatiFattura 2.0, DTE: invoices issued)."""
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<ns2:DatiFattura xmlns:ns2="http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v2.0" versione="DAT20">
  <DTE>
    <CedentePrestatoreDTE>
      <IdentificativiFiscali>
        <IdFiscaleIVA><IdPaese>IT</IdPaese><IdCodice>{vat}</IdCodice></IdFiscaleIVA>
      </IdentificativiFiscali>
      <AltriDatiIdentificativi><Denominazione>Fornitore SRL</Denominazione></AltriDatiIdentificativi>
    </CedentePrestatoreDTE>
    <CessionarioCommittenteDTE>
      <IdentificativiFiscali>
        <IdFiscaleIVA><IdPaese>IT</IdPaese><IdCodice>{client_vat}</IdCodice></IdFiscaleIVA>
      </IdentificativiFiscali>
      <DatiFatturaBodyDTE>
        <DatiGenerali><TipoDocumento>TD01</TipoDocumento><Data>2026-10-01</Data><Numero>1</Numero></DatiGenerali>
        <DatiRiepilogo>
          <ImponibileImporto>100.00</ImponibileImporto>
          <DatiIVA><Imposta>22.00</Imposta><Aliquota>22.00</Aliquota></DatiIVA>
        </DatiRiepilogo>
      </DatiFatturaBodyDTE>
    </CessionarioCommittenteDTE>
  </DTE>
</ns2:DatiFattura>
""".encode()


def sign(pkcs12: bytes, content: bytes) -> bytes:
    """CAdES-BES attached (DER), as signing tools produce a .p7m."""
    signer = signers.SimpleSigner.load_pkcs12_data(pkcs12, other_certs=[], passphrase=b"p12-pw")
    signed = run_sync(signer.async_sign_general_data(content, "sha256", detached=False, use_cades=True))
    return signed.dump()


def tamper(p7m: bytes, old: bytes, new: bytes) -> bytes:
    """Change the signed content after signing (same length): the digest no longer matches."""
    assert len(old) == len(new) and old in p7m
    return p7m.replace(old, new, 1)


def zip_of(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
