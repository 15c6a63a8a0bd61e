"""Numbers as an attacker writes them (issue 19): other scripts' digits, 2**63, underscores. Every
endpoint answers a clear 4xx in the contract's shape, never a 500."""

from __future__ import annotations

import pytest

from tests.search.factories import premium

INT4 = str(2**31)  # one more than an id column holds on PostgreSQL
HUGE = str(2**63)  # one more than SQLite's INTEGER
LARGEST = str(2**63 - 1)
ODD = ["³", "١", "1_0", "%2B1", "-1", "1e3", "１", "0x10", INT4, HUGE, "9" * 5000]

GETS = [
    "/api/v2/invoices-out/detail?id={n}",
    "/api/v2/invoices-in/detail?id={n}",
    "/api/v2/invoices-out/zip?id={n}",
    "/api/v2/invoices-out/pdd?id={n}",
    "/api/v2/invoices-in/notifications?id={n}",
    "/services/invoice/out/pdd?invoiceId={n}",
    "/services/invoice/in/getInvoiceWithUnsignedFile?invoiceId={n}",
    "/services/invoice/out/{n}",
    "/services/invoice/in/{n}",
    "/services/notification/out/{n}",
    "/services/notification/in/{n}",
    "/api/v2/callbacks/{n}",
    "/api/v2/callbacks/{n}/deliveries",
    "/api/v2/events?after={n}",
    "/api/v2/events?limit={n}",
    "/auth/multicedenti/{n}",
    "/auth/multicedenti?page={n}",
    "/auth/multicedenti?size={n}",
    "/services/invoice/out/findByUsername?page={n}",
    "/services/invoice/in/findByUsername?size={n}",
    "/api/v2/invoices-out?creationStartDate=2026-11-20&creationEndDate=2026-11-23&page={n}",
]


@pytest.fixture
def headers(client) -> dict[str, str]:
    return premium(client).headers


def _clear_refusal(response) -> None:
    assert 400 <= response.status_code < 500, (response.url, response.status_code, response.text[:300])
    if response.headers.get("content-type", "").startswith("application/json"):
        body = response.json()
        assert body.get("errorCode") or body.get("error"), body


@pytest.mark.parametrize("path", GETS)
def test_odd_numbers_in_paths_and_queries_are_refused_clearly(client, headers, path):
    for number in ODD:
        _clear_refusal(client.get(path.format(n=number), headers=headers))


@pytest.mark.parametrize("path", [p for p in GETS if "page=" in p or "after=" in p])
def test_the_largest_id_is_an_empty_answer_or_a_clear_refusal(client, headers, path):
    response = client.get(path.format(n=LARGEST), headers=headers)
    assert response.status_code < 500, response.text


def test_digits_of_other_scripts_name_no_invoice(client, headers):
    # `int("١")` is 1: an Arabic-Indic digit must not read as invoice 1
    response = client.get("/api/v2/invoices-out/detail?id=١", headers=headers)
    assert response.status_code == 400
    assert "must be an integer" in response.json()["errorDescription"]


@pytest.mark.parametrize("ids", [["³"], [HUGE], ["1_0"], [True], [1.5], [None], [{"a": 1}]])
def test_bulk_download_ids_are_checked(client, headers, ids):
    response = client.post(
        "/api/v2/invoices-out/download", json={"ids": ids, "downloadTypes": ["XML"]}, headers=headers
    )
    _clear_refusal(response)


def test_a_page_past_any_offset_is_refused_not_overflowed(client, headers):
    response = client.get("/services/invoice/out/findByUsername?page=9223372036854775807", headers=headers)
    assert response.status_code == 400
    assert "page must be an integer at most" in response.json()["errorDescription"]
