"""HTTP Range on package downloads (§4.2 `Accept-Ranges: bytes`; RFC 9110 §14): one range, 206 or 416."""

from __future__ import annotations

import re

from fastapi import Response

from varco.core.disposition import attachment

_RANGE = re.compile(r"\s*bytes\s*=\s*([0-9]{0,18})\s*-\s*([0-9]{0,18})\s*")  # ASCII, no overflow


def zip_download(name: str, content: bytes, range_header: str | None) -> Response:
    """The ZIP whole (200), one byte range of it (206), or 416 when the range lies beyond the end."""
    headers = {"Content-Disposition": attachment(name), "Accept-Ranges": "bytes"}
    size = len(content)
    match = _RANGE.fullmatch(range_header or "")
    if not range_header or match is None or not any(match.groups()):
        return Response(
            content, media_type="application/zip", headers=headers
        )  # no or unreadable Range: ignored
    first, last = match.groups()
    if first:
        start = int(first)
        end = min(int(last), size - 1) if last else size - 1
        if last and int(last) < start:
            return Response(content, media_type="application/zip", headers=headers)  # invalid: ignored
    else:  # suffix range: the last N bytes
        start, end = max(size - int(last), 0), size - 1
        if int(last) == 0:
            start = size
    if start >= size:
        return Response(
            b"",
            status_code=416,
            media_type="application/zip",
            headers={**headers, "Content-Range": f"bytes */{size}"},
        )
    headers["Content-Range"] = f"bytes {start}-{end}/{size}"
    return Response(content[start : end + 1], status_code=206, media_type="application/zip", headers=headers)
