"""PDF rendering time per invoice file (fpdf2), over the corpus base files and official samples."""

from __future__ import annotations

import time
from pathlib import Path

from varco.rendering.document import read_document
from varco.rendering.pdf import render_pdf

CASES = Path(__file__).resolve().parents[1] / "tests" / "fatturapa" / "cases"


def main(rounds: int = 50) -> None:
    files = sorted((CASES / "official").glob("*.xml")) + sorted((CASES / "base").glob("*.xml"))
    contents = [(f.name, f.read_bytes()) for f in files]
    start = time.perf_counter()  # noqa: TID251 - a benchmark measures wall time
    size = 0
    for _ in range(rounds):
        for name, xml in contents:
            size += len(render_pdf(read_document(xml), name))
    elapsed = time.perf_counter() - start  # noqa: TID251
    count = rounds * len(contents)
    print(
        f"rendered {count} PDFs in {elapsed:.2f}s: "
        f"{1000 * elapsed / count:.1f} ms each, {size // count} bytes avg"
    )


if __name__ == "__main__":
    main()
