"""One error handler: contract shapes, 400 for validation, never a 500 body the contract does not know."""

from __future__ import annotations

from fastapi import Query
from sqlalchemy import text

from varco.core.deps import SessionDep


def test_validation_errors_are_400_with_a_clear_message(app, client):
    @app.get("/test/needs-int")
    def needs_int(n: int = Query()) -> dict:
        return {"n": n}

    response = client.get("/test/needs-int?n=abc")
    assert response.status_code == 400
    body = response.json()
    assert body["errorCode"] == "0002"
    assert "n:" in body["errorDescription"] and "integer" in body["errorDescription"]
    assert response.headers["x-request-id"] in body["errorDescription"]


def test_unexpected_errors_are_0001_with_the_request_id(app, client):
    @app.get("/test/crash")
    def crash() -> dict:
        raise ZeroDivisionError

    response = client.get("/test/crash")
    assert response.status_code == 500
    assert response.json()["errorCode"] == "0001"
    assert response.headers["x-request-id"] in response.json()["errorDescription"]


def test_a_failing_commit_is_an_error_not_a_success(app, client, db):
    table = "commit_probe"
    with db.engine.begin() as conn:
        conn.execute(text(f"CREATE TABLE IF NOT EXISTS {table} (id INTEGER PRIMARY KEY)"))

    @app.post("/test/write-twice")
    def write_twice(session: SessionDep) -> dict:
        # the duplicate key only fails when the unit of work commits, after the handler returned
        session.execute(text(f"INSERT INTO {table} (id) VALUES (1)"))
        session.execute(text(f"INSERT INTO {table} (id) VALUES (1)"))
        return {"ok": True}

    try:
        response = client.post("/test/write-twice")
        assert response.status_code == 500
        with db.engine.connect() as conn:
            assert conn.execute(text(f"SELECT count(*) FROM {table}")).scalar() == 0
    finally:  # the database is shared by the whole session: leave no table behind
        with db.engine.begin() as conn:
            conn.execute(text(f"DROP TABLE {table}"))


def test_unknown_path_is_404_in_contract_shape(client):
    response = client.get("/no/such/thing")
    assert response.status_code == 404
    assert response.json()["errorCode"] == "0002"


def test_health_reports_the_database(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json()["database"] == "ok"


def test_readiness_names_the_service_that_is_down(client, configure):
    ready = client.get("/health/ready")
    assert ready.status_code == 200 and (ready.json()["database"], ready.json()["redis"]) == (
        "ok",
        "not used",
    )
    configure(redis_url="redis://127.0.0.1:6379/0")
    assert client.get("/health/ready").json()["redis"] == "ok"
    configure(redis_url="redis://127.0.0.1:1/0")  # nothing listens there
    down = client.get("/health/ready")
    assert down.status_code == 503
    assert (down.json()["status"], down.json()["database"], down.json()["redis"]) == (
        "unavailable",
        "ok",
        "ConnectionError",
    )
    assert client.get("/health").status_code == 200  # liveness: the process itself is fine


def test_openapi_describes_every_endpoint_with_examples(client):
    spec = client.get("/openapi.json").json()
    assert {"/auth/signin", "/auth/userInfo", "/health"} <= set(spec["paths"])
    signin = spec["paths"]["/auth/signin"]["post"]
    assert "application/x-www-form-urlencoded" in signin["requestBody"]["content"]
    assert "400" in signin["responses"]
    schemas = spec["components"]["schemas"]
    assert schemas["TokenResponse"]["example"]["expires_in"] == 1800
    assert "example" in schemas["UserInfo"]


def test_a_database_that_stays_locked_is_busy_not_broken(app, client):
    from sqlalchemy.exc import OperationalError

    @app.get("/test/locked")
    def locked() -> dict:
        raise OperationalError("BEGIN IMMEDIATE", {}, Exception("database is locked"))

    response = client.get("/test/locked")
    assert response.status_code == 503 and response.headers["retry-after"] == "5"
    assert response.json()["errorCode"] == "0095"
