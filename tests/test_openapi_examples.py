"""/openapi.json is worth generating a client from: every parameter typed, described, with an
example; every request body and JSON answer with an example from a real exchange, valid against its
schema; the recorded exchange still what the server answers (docs/openapi.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest

from tests.factories import bearer, make_account, sign_in
from varco.openapi_examples import recorded

ROOT = Path(__file__).resolve().parents[1]
RECORDER = ROOT / "scripts" / "record_openapi_examples.py"
METHODS = {"get", "put", "post", "delete", "patch"}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    from varco.app import create_app

    return create_app().openapi()


def operations(document: dict[str, Any]):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in METHODS:
                yield f"{method.upper()} {path}", operation


def has_example(content: dict[str, Any]) -> bool:
    return "example" in content or bool(content.get("examples"))


def test_every_parameter_has_a_type_a_description_and_an_example(document):
    missing = []
    for name, operation in operations(document):
        for parameter in operation.get("parameters", []):
            schema = parameter.get("schema", {})
            typed = "type" in schema or all("type" in option for option in schema.get("anyOf", [{}]))
            if not (typed and parameter.get("description") and "example" in parameter):
                missing.append(f"{name} {parameter['in']} {parameter['name']}")
            elif schema.get("anyOf") and {"type": "null"} in schema["anyOf"]:
                missing.append(f"{name} {parameter['name']}: typed string|null, not what the route parses")
    assert missing == []


def test_every_request_body_and_json_answer_has_an_example(document):
    missing = []
    for name, operation in operations(document):
        for media, content in operation.get("requestBody", {}).get("content", {}).items():
            if not has_example(content):
                missing.append(f"{name} request {media}")
        for status, response in operation["responses"].items():
            for media, content in response.get("content", {}).items():
                if status.startswith("2") and media == "application/json" and not has_example(content):
                    missing.append(f"{name} {status}")
    assert missing == []


def test_dates_and_numbers_are_typed_as_the_routes_parse_them(document):
    search = {p["name"]: p for p in document["paths"]["/api/v2/invoices-out"]["get"]["parameters"]}
    assert search["creationStartDate"]["schema"] == {"type": "string", "format": "date-time"}
    assert search["creationStartDate"]["required"] and search["creationEndDate"]["required"]
    assert not search["modifiedStartDate"]["required"]
    assert search["page"]["schema"]["type"] == "integer" and search["page"]["schema"]["minimum"] == 1
    assert search["size"]["schema"].items() >= {"type": "integer", "minimum": 1, "maximum": 100}.items()
    detail = {p["name"]: p for p in document["paths"]["/api/v2/invoices-in/detail"]["get"]["parameters"]}
    assert detail["id"]["schema"]["type"] == "integer"
    assert detail["includeUnsignedFile"]["schema"] == {"type": "boolean", "default": False}
    assert detail["includeFile"]["example"] is True  # as recorded, in the declared type


# What the contract (or decisions.md) requires; the server answers 400 0002 naming it when absent.
REQUIRED = [
    ("/api/v2/invoices-out", "creationStartDate", {"creationEndDate": "2026-11-23"}),
    ("/api/v2/invoices-in", "creationEndDate", {"creationStartDate": "2026-11-23"}),
    ("/api/v2/invoices-out/notifications/detail", "filename", {}),
    ("/services/invoice/out/getByFilename", "filename", {"includeFile": "true"}),
    ("/services/invoice/in/getByIdSdi", "idSdi", {}),
    ("/services/invoice/in/getZipByFilename", "filename", {}),
    ("/services/notification/out/getByFilename", "filename", {}),
    ("/services/notification/in/getByInvoiceFilename", "invoiceFilename", {}),
]


@pytest.mark.parametrize(("path", "name", "others"), REQUIRED)
def test_a_parameter_the_contract_requires_is_required_and_refused_when_absent(
    document, client, path, name, others
):
    [parameter] = [p for p in document["paths"][path]["get"]["parameters"] if p["name"] == name]
    assert parameter["required"] is True
    token = sign_in(client, make_account().username)
    answer = client.get(path, params=others, headers=bearer(token))
    assert answer.status_code == 400 and answer.json()["errorCode"] == "0002"
    assert name in answer.json()["errorDescription"]


def test_a_blank_optional_query_value_is_documented_and_taken_as_absent(document, client):
    path = "/services/invoice/out/findByUsername"
    declared = {p["name"]: p for p in document["paths"][path]["get"]["parameters"]}
    assert declared["startDate"]["allowEmptyValue"] and declared["size"]["allowEmptyValue"]
    assert "allowEmptyValue" not in declared["startDate"]["schema"]
    token = sign_in(client, make_account().username)
    answer = client.get(path, params={"startDate": "", "page": "", "size": " "}, headers=bearer(token))
    assert answer.status_code == 200 and (answer.json()["number"], answer.json()["size"]) == (1, 10)
    # a required one is not blank-tolerant, and the server refuses it blank
    window = {p["name"]: p for p in document["paths"]["/api/v2/invoices-out"]["get"]["parameters"]}
    assert "allowEmptyValue" not in window["creationStartDate"]
    refused = client.get(
        "/api/v2/invoices-out",
        params={"creationStartDate": "", "creationEndDate": "2026-11-23"},
        headers=bearer(token),
    )
    assert refused.status_code == 400 and refused.json()["errorCode"] == "0002"


def test_version_1_communication_calls_document_their_lookup_and_rate_refusals(document, client):
    info = document["paths"]["/services/ClientRequest/GetTransmissionInfoRequest"]["post"]["responses"]
    create = document["paths"]["/services/ClientRequest/CreateTransmissionRequest"]["post"]["responses"]
    assert {"404", "429", "503"} <= set(info) and {"429", "503"} <= set(create) and "404" not in create
    account = make_account(password="pw-1")
    body = {"userName": account.username, "password": "pw-1", "requestID": "0123456789ab"}
    answer = client.post("/services/ClientRequest/GetTransmissionInfoRequest", json=body)
    assert answer.status_code == 404 and answer.json()["errorCode"] == "0002"


def validator(document: dict[str, Any], schema: dict[str, Any]) -> jsonschema_rs.Validator:
    """The schema with the document's components beside it, so that its $refs resolve."""
    whole = {**schema, "components": document["components"]}
    return jsonschema_rs.Draft202012Validator(whole, validate_formats=True)


def examples_with_schemas(document: dict[str, Any]):
    for name, operation in operations(document):
        for parameter in operation.get("parameters", []):
            if "example" in parameter:
                yield f"{name} parameter {parameter['name']}", parameter["schema"], parameter["example"]
        bodies = [("request", operation.get("requestBody", {}))]
        bodies += [(status, response) for status, response in operation["responses"].items()]
        for where, body in bodies:
            for media, content in body.get("content", {}).items():
                if "schema" not in content:
                    continue
                if "example" in content:
                    yield f"{name} {where} {media}", content["schema"], content["example"]
                for key, named in content.get("examples", {}).items():
                    yield f"{name} {where} {media} {key}", content["schema"], named["value"]


def test_every_example_is_valid_against_its_schema(document):
    checked, invalid = 0, []
    for where, schema, example in examples_with_schemas(document):
        checked += 1
        errors = [e.message for e in validator(document, schema).iter_errors(example)]
        if errors:
            invalid.append(f"{where}: {errors[:3]}")
    assert invalid == [] and checked > 300


def test_the_validation_catches_an_example_of_the_wrong_shape(document):
    # the check above proves nothing unless a wrong example fails it
    upload = document["paths"]["/services/invoice/upload"]["post"]
    schema = upload["responses"]["200"]["content"]["application/json"]["schema"]
    assert validator(document, schema).is_valid(
        upload["responses"]["200"]["content"]["application/json"]["example"]
    )
    assert not validator(document, schema).is_valid({"uploadFileName": 42, "errorCode": "0000"})
    [start] = [
        p for p in document["paths"]["/api/v2/invoices-out"]["get"]["parameters"] if p["in"] == "query"
    ][:1]
    assert start["name"] == "creationStartDate"
    assert validator(document, start["schema"]).is_valid("2026-11-23T00:00:00+01:00")
    assert not validator(document, start["schema"]).is_valid("23/11/2026")


def test_every_operation_was_recorded_and_nothing_else(document):
    assert set(recorded()) == {name for name, _ in operations(document)}


def shape(value: Any) -> Any:
    """Keys all the way down: a list's items merged, scalars only as 'a value'."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        merged: dict[str, Any] = {}
        for item in value:
            if isinstance(item, dict):
                for key, sub in shape(item).items():
                    merged.setdefault(key, sub)
        return [merged] if merged else ["value" if value else "empty"]
    return None if value is None else "value"


def exchange_shape(exchange: dict[str, Any]) -> dict[str, Any]:
    request = exchange.get("request")
    return {
        "parameters": sorted(exchange["parameters"]),
        "request": request and (request["mediaType"], shape(request["body"])),
        "responses": {
            status: (answer["mediaType"], shape(answer["body"]))
            for status, answer in exchange["responses"].items()
        },
    }


def test_the_recorded_examples_are_what_the_server_answers_now(tmp_path):
    fresh_path = tmp_path / "examples.json"
    result = subprocess.run(
        [sys.executable, str(RECORDER), "--output", str(fresh_path)],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    fresh, stored = json.loads(fresh_path.read_text()), recorded()
    assert sorted(fresh) == sorted(stored)
    stale = {
        name: {"recorded": exchange_shape(stored[name]), "now": exchange_shape(fresh[name])}
        for name in stored
        if exchange_shape(stored[name]) != exchange_shape(fresh[name])
    }
    assert stale == {}, (
        "refresh: .venv/bin/python scripts/record_openapi_examples.py\n" + json.dumps(stale, indent=1)[:6000]
    )
    # what must not be published was replaced in the fresh recording too
    signin = fresh["POST /auth/signin"]["responses"]["200"]["body"]
    assert signin["access_token"].startswith("EXAMPLE-") and signin["refresh_token"].startswith("EXAMPLE-")
    assert fresh["POST /api/v2/callbacks"]["responses"]["201"]["body"]["secret"].startswith("vcs_EXAMPLE-")
    upload = fresh["POST /services/invoice/upload"]
    assert upload["request"]["body"]["dataFile"].endswith("characters in full]")
    assert upload["responses"]["200"]["body"]["errorDescription"].endswith("[request 3f9a1c0d2b7e4a51]")
