"""The packaged WSDLs and XSDs: byte-exact copies, compiled offline, read into contracts."""

from __future__ import annotations

import hashlib

import pytest
from lxml import etree

from varco.sdi.sdicoop import schemas
from varco.sdi.sdicoop.contracts import Service, contract, wsdl_document

# shared/fatturapa/SOURCES.md
SHA256 = {
    "RicezioneFatture_v1.0.wsdl": "ff34f2415da2c41dbeb5c515a9a996f757f08854d9eefe1f95376dcaff4fd29d",
    "RicezioneTypes_v1.0.xsd": "ecd2b16924b91770dcd1688a912141bd883d66bc782d139b4b9570867e2d799e",
    "SdIRiceviFile_v1.0.wsdl": "d7f2ea0f03846738d818169c41e484c16932a9fcacbcc59fe73f7f1c3a861a85",
    "SdIRiceviNotifica_v1.0.wsdl": "c8a478d00f4cc9654d9c11bc3bdd5039b196e158ed3e566ce17565ab2cb00d72",
    "SdITrasmissioneFile_v2.0.wsdl": "edd52a2a6eef9dd195f470901eab122b2f669612dd6c8ca6a696fcd2af5c09fa",
    "TrasmissioneFatture_v1.1.wsdl": "a6ad0f34186bb3e8a80c07eb36139045bebb3a3a1fdc4672f3681c0e445069b9",
    "TrasmissioneFileTypes_v2.0.xsd": "9367dfca53064fc7bd158ce78251201da94321b293b00b13a2f8d23759e9d299",
    "TrasmissioneTypes_v1.0.xsd": "75e3a583b75f5a99b7fd01909029bdffcc375be4f0b61d8e3f7f2be9b8db913c",
    "TrasmissioneTypes_v1.1.xsd": "bcb0f1fe8401aa8b07624aaf194c9bd7041029bd4058509b9c322115719a3523",
    "MessaggiTypes_v1.1.xsd": "0efe7039808088d5661cde091f58f8d02c03ec61d3816301b0f1ccb883d11e48",
    "DatiFatturaMessaggi_v2.0.xsd": "5be05cfb930b7b0a2f5b6d534b0de7c1c0abb4dfaedc37b518f96b9a4bf9bd50",
    "xmldsig-core-schema.xsd": "35cf8197da812c85e40d57891b35c94187569ed474a2dac813ce5090dafcd35c",
}


def test_package_data_is_the_official_files() -> None:
    present = {p.name for p in schemas.DATA_DIR.iterdir()}
    assert present == set(SHA256)
    for name, digest in SHA256.items():
        assert hashlib.sha256(schemas.data_file(name).read_bytes()).hexdigest() == digest, name


@pytest.mark.parametrize("name", [n for n in SHA256 if n.endswith(".xsd")])
def test_every_xsd_compiles_offline(name: str) -> None:
    assert isinstance(schemas.schema(name), etree.XMLSchema)  # xmldsig by the resolver, no network


def test_messages_validate_with_the_signature_schema() -> None:
    messaggi = schemas.schema(schemas.MESSAGGI_XSD)
    mt = etree.fromstring(
        b'<ns3:MetadatiInvioFile xmlns:ns3="http://www.fatturapa.gov.it/sdi/messaggi/v1.0" versione="1.0">'
        b"<IdentificativoSdI>29218239</IdentificativoSdI><NomeFile>ESB85905495_00010.xml</NomeFile>"
        b"<CodiceDestinatario>WSBKWM</CodiceDestinatario><Formato>FPA12</Formato>"
        b"<TentativiInvio>1</TentativiInvio><MessageId>176121330</MessageId></ns3:MetadatiInvioFile>"
    )
    assert schemas.validation_error(messaggi, mt) is None


def test_data_file_stays_in_package_data() -> None:
    for name in ("../__init__.py", "/etc/passwd", "nope.xsd"):
        with pytest.raises(FileNotFoundError):
            schemas.data_file(name)


def test_operations_as_the_wsdls_define_them() -> None:
    names = {service: [op.name for op in contract(service).operations] for service in Service}
    assert names == {
        Service.TRASMISSIONE_FATTURE: [
            "RicevutaConsegna",
            "NotificaMancataConsegna",
            "NotificaScarto",
            "NotificaEsito",
            "NotificaDecorrenzaTermini",
            "AttestazioneTrasmissioneFattura",
        ],
        Service.RICEZIONE_FATTURE: ["RiceviFatture", "NotificaDecorrenzaTermini"],
        Service.SDI_RICEVI_FILE: ["RiceviFile"],
        Service.SDI_RICEVI_NOTIFICA: ["NotificaEsito"],
        Service.SDI_TRASMISSIONE_FILE: ["Trasmetti", "Esito"],
    }
    one_way = [op.name for s in Service for op in contract(s).operations if op.is_one_way]
    assert len(one_way) == 7
    ricevi = contract(Service.SDI_RICEVI_FILE).operation("RiceviFile")
    assert ricevi.soap_action == "http://www.fatturapa.it/SdIRiceviFile/RiceviFile"
    assert contract(Service.SDI_RICEVI_FILE).types_file == "TrasmissioneTypes_v1.0.xsd"
    assert contract(Service.TRASMISSIONE_FATTURE).types_file == "TrasmissioneTypes_v1.1.xsd"


def test_wsdl_address_is_escaped() -> None:
    document = wsdl_document(Service.SDI_RICEVI_FILE, 'https://h/"x"&<y>')
    [location] = etree.fromstring(document).xpath(
        "//s:address/@location", namespaces={"s": "http://schemas.xmlsoap.org/wsdl/soap/"}
    )
    assert location == 'https://h/"x"&<y>'
