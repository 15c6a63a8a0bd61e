"""Totals and order of long lists (whole months counted from invoice_month_counts, pages merged per
taxpayer), and the documentType filter on batches: the same answers as counting file by file."""

from __future__ import annotations

from datetime import UTC, datetime

from lxml import etree

from tests.factories import make_basic
from tests.invoices.support import invoice_xml
from tests.search.factories import filenames, find_v1, received, search_v2, upload

# Received files of a Premium user and of its delegator, across month boundaries (UTC).
TIMES = [
    ("own", datetime(2025, 1, 15, 10, tzinfo=UTC)),
    ("theirs", datetime(2025, 1, 31, 23, 59, 59, 999999, tzinfo=UTC)),
    ("own", datetime(2025, 2, 1, tzinfo=UTC)),
    ("theirs", datetime(2025, 2, 20, 8, tzinfo=UTC)),
    ("own", datetime(2025, 3, 10, 9, tzinfo=UTC)),
    ("theirs", datetime(2025, 4, 1, tzinfo=UTC)),
    ("own", datetime(2025, 5, 5, 17, tzinfo=UTC)),
]


def _files(supplier):
    assignor = make_basic(delegate_to=supplier.account, vat_code="12345670017")
    owners = {"own": supplier.account, "theirs": assignor}
    return [(at, received(owners[who], created_at=at).filename) for who, at in TIMES]


def test_long_lists_count_exactly_and_page_newest_first_across_taxpayers(client, supplier):
    files = _files(supplier)
    newest_first = [name for _, name in sorted(files, reverse=True)]
    pages = [find_v1(client, supplier, "in", page=p, size=3).json() for p in (1, 2, 3)]
    assert [filenames_of(p) for p in pages] == [newest_first[0:3], newest_first[3:6], newest_first[6:7]]
    assert {(p["totalElements"], p["totalPages"]) for p in pages} == {(7, 3)}
    past = find_v1(client, supplier, "in", page=4, size=3)
    assert past.status_code == 400 and "between 1 and 3" in past.json()["errorDescription"]


def test_totals_with_dates_add_partial_months_to_whole_ones(client, supplier):
    files = _files(supplier)

    def expect(start: datetime | None, end: datetime | None) -> list[str]:
        inside = [(at, n) for at, n in files if (start is None or at >= start) and (end is None or at <= end)]
        return [name for _, name in sorted(inside, reverse=True)]

    cases = [
        (datetime(2025, 1, 20, tzinfo=UTC), datetime(2025, 4, 1, tzinfo=UTC)),  # edges + Feb, Mar
        (datetime(2025, 2, 1, tzinfo=UTC), None),  # from a month's first instant
        (None, datetime(2025, 1, 31, 23, 59, 59, 999999, tzinfo=UTC)),  # to a month's last instant
        (datetime(2025, 1, 31, 23, 59, 59, 999999, tzinfo=UTC), datetime(2025, 2, 1, tzinfo=UTC)),
        (datetime(2024, 6, 1, tzinfo=UTC), datetime(2025, 12, 31, tzinfo=UTC)),
    ]
    for start, end in cases:
        query = {}
        if start:
            query["startDate"] = start.isoformat()
        if end:
            query["endDate"] = end.isoformat()
        body = find_v1(client, supplier, "in", size=100, **query).json()
        assert filenames_of(body) == expect(start, end), (start, end)
        assert body["totalElements"] == len(expect(start, end)), (start, end)


def test_document_type_matches_any_invoice_of_a_batch(client, supplier):
    root = etree.fromstring(invoice_xml("FPR12_batch"))
    kinds = list(root.iter("TipoDocumento"))
    assert len(kinds) == 2
    kinds[1].text = "TD04"
    batch = upload(client, supplier, etree.tostring(root, xml_declaration=True, encoding="UTF-8")).filename
    single = upload(client, supplier).filename
    assert set(filenames(search_v2(client, supplier, documentType="TD01"))) == {batch, single}
    assert filenames(search_v2(client, supplier, documentType="TD04")) == [batch]
    assert filenames(search_v2(client, supplier, documentType="TD02")) == []
    record = search_v2(client, supplier, documentType="TD04").json()["content"][0]
    assert [i["documentType"] for i in record["invoices"]] == ["TD01", "TD04"]


def filenames_of(page: dict) -> list[str]:
    return [r["filename"] for r in page["content"]]
