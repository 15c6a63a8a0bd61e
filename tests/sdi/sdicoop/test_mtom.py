"""MTOM/XOP decoding: byte-exact parts, other stacks' framing, and refusals."""

from __future__ import annotations

import base64

import pytest
from requests_toolbelt.multipart.decoder import MultipartDecoder
from zeep.wsdl.attachments import MessagePack

from varco.sdi.sdicoop import envelope, mtom

ENVELOPE = (
    b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><t:x xmlns:t="urn:t">'
    b"<File>%s</File><Metadati>%s</Metadati></t:x></s:Body></s:Envelope>"
)
EDGES = [b"", b"\n", b"\r\n", b"\r\n\r\n--not-a-boundary\r\n", bytes(range(256)), b"\xef\xbb\xbf<a/>\n"]


def _plain(file: bytes, metadati: bytes) -> bytes:
    return ENVELOPE % (base64.b64encode(file), base64.b64encode(metadati))


def _texts(root: object) -> tuple[bytes, bytes]:
    return (
        base64.b64decode(root.findtext(".//File") or ""),  # type: ignore[attr-defined]
        base64.b64decode(root.findtext(".//Metadati") or ""),  # type: ignore[attr-defined]
    )


@pytest.mark.parametrize("content", EDGES, ids=["empty", "lf", "crlf", "fake-delimiter", "all-bytes", "bom"])
def test_round_trip_is_byte_exact(content: bytes) -> None:
    content_type, body = mtom.encode(_plain(content, content[::-1]))
    assert mtom.is_multipart(content_type) and b"xop:Include" in body
    assert _texts(mtom.decode(content_type, body)) == (content, content[::-1])


def test_zeep_alone_would_alter_such_files() -> None:
    """Why mtom.py exists: zeep strips CR/LF around every binary part."""
    content_type, body = mtom.encode(_plain(b"\r\n<a/>\r\n", b"x"))
    parts = MultipartDecoder(body, content_type).parts
    assert MessagePack(parts[1:]).attachments[0].content == b"<a/>"
    assert _texts(mtom.decode(content_type, body))[0] == b"\r\n<a/>\r\n"


def _framed(parts: list[tuple[str, bytes]], newline: bytes = b"\r\n", boundary: str = "b1") -> bytes:
    out = b"preamble" + newline
    for headers, content in parts:
        out += f"--{boundary}".encode() + newline + headers.replace("\n", newline.decode()).encode()
        out += newline + newline + content + newline
    return out + f"--{boundary}--".encode() + newline + b"epilogue"


ROOT = (
    b'<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><t:x xmlns:t="urn:t">'
    b'<File><xop:Include xmlns:xop="http://www.w3.org/2004/08/xop/include" href="cid:A%40b"/></File>'
    b"<Metadati>bWV0YQ==</Metadati></t:x></s:Body></s:Envelope>"
)


def test_lf_framing_folded_headers_quoted_printable_and_case() -> None:
    body = _framed(
        [
            ('Content-Type: application/xop+xml;\n type="text/xml"\nContent-ID: root', ROOT),
            (
                "Content-Type: text/plain\nContent-Transfer-Encoding: quoted-printable\nContent-Id: <a@B>",
                b"caf=C3=A8",
            ),
        ],
        newline=b"\n",
    )
    root = mtom.decode('multipart/related; boundary="b1"; type="application/xop+xml"', body)
    assert _texts(root) == ("cafè".encode(), b"meta")


def test_start_parameter_picks_the_root() -> None:
    body = _framed([("Content-ID: <A@b>", b"payload"), ("Content-ID: <root@x>", ROOT)])
    root = mtom.decode('multipart/related; boundary=b1; start="<root@x>"', body)
    assert _texts(root)[0] == b"payload"


@pytest.mark.parametrize(
    ("content_type", "body"),
    [
        ("multipart/related", _framed([("Content-ID: <r>", ROOT)])),  # no boundary
        ('multipart/related; boundary="b1"', b"no delimiters at all"),
        (
            'multipart/related; boundary="b1"',
            _framed([("Content-ID: <r>", ROOT)]).split(b"--b1--")[0],
        ),  # no close
        ('multipart/related; boundary="b1"', _framed([("Content-ID: <r>", ROOT)])),  # cid:A@b missing
        ('multipart/related; boundary="b1"; start="<nope>"', _framed([("Content-ID: <r>", ROOT)])),
        (
            'multipart/related; boundary="b1"',
            _framed(
                [("Content-ID: <r>", ROOT), ("Content-ID: <A@b>\nContent-Transfer-Encoding: base64", b"!!")]
            ),
        ),
        (
            'multipart/related; boundary="b1"',
            _framed(
                [("Content-ID: <r>", ROOT), ("Content-ID: <A@b>\nContent-Transfer-Encoding: x-gzip", b"x")]
            ),
        ),
        ('multipart/related; boundary="b1"', _framed([("bad header line", ROOT)])),
        ('multipart/related; boundary="b1"', _framed([("Content-ID: <r>", ROOT)] + [("X: y", b"")] * 70)),
    ],
    ids=[
        "no-boundary",
        "no-delimiter",
        "no-close",
        "missing-part",
        "bad-start",
        "bad-base64",
        "bad-cte",
        "bad-header",
        "too-many-parts",
    ],
)
def test_unreadable_multipart_is_refused(content_type: str, body: bytes) -> None:
    with pytest.raises(mtom.MtomError):
        mtom.decode(content_type, body)
    with pytest.raises(envelope.NotSoap):
        envelope.read(content_type, body)


def test_include_must_be_alone_in_its_element() -> None:
    root = ROOT.replace(b"<File><xop", b"<File>text<xop")
    body = _framed([("Content-ID: <r>", root), ("Content-ID: <A@b>", b"x")])
    with pytest.raises(mtom.MtomError, match="only content"):
        mtom.decode('multipart/related; boundary="b1"', body)


def test_a_dtd_in_the_root_part_is_refused() -> None:
    root = b'<!DOCTYPE x [<!ENTITY e "e">]>' + ROOT
    with pytest.raises(envelope.NotSoap):
        envelope.read('multipart/related; boundary="b1"', _framed([("Content-ID: <r>", root)]))
