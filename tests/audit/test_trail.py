"""The audit trail through GET /api/v2/admin/audit: the Done-when scenario read back exactly, the
filters and pages, who may read it, bad parameters, and no secret in the table or the logs."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import select

from tests.audit.support import ADMIN_IP, USER_IP, clients, read, run_scenario
from tests.factories import bearer, make_account, sign_in
from varco.audit.models import AuditEvent
from varco.core.db import unit_of_work


@pytest.fixture
def scenario(app, client, clock):
    user, operator = clients(app)
    done = run_scenario(user, operator, clock)
    reader = sign_in(client, done.admin, "a-longer-s3cret")  # the operator's new password (panel)
    return done, reader


def test_the_trail_reads_back_exactly_the_events_of_the_scenario(client, scenario):
    done, reader = scenario
    answer = read(client, reader, username=done.username, **{"from": done.start.isoformat()})
    assert answer.status_code == 200, answer.text
    page = answer.json()
    events = page["content"]
    assert [e["kind"] for e in events] == [  # newest first
        "callback.secret.rotated",
        "account.tier.changed",
        "auth.signin.succeeded",
        "auth.signin.failed",
    ]
    assert (page["totalElements"], page["number"], page["totalPages"], page["first"], page["last"]) == (
        4,
        1,
        1,
        True,
        True,
    )
    rotated, tier, succeeded, failed = events
    assert [e["requestId"] for e in reversed(events)] == done.request_ids

    assert failed["actorUsername"] is None and failed["actorAccountId"] is None
    assert failed["subjectUsername"] == done.username and failed["ip"] == USER_IP
    assert failed["details"] == {"channel": "api", "reason": "wrong_credentials"}

    assert succeeded["actorUsername"] == succeeded["subjectUsername"] == done.username
    assert succeeded["actorAccountId"] == succeeded["subjectAccountId"] is not None
    assert succeeded["ip"] == USER_IP and succeeded["details"]["channel"] == "api"

    assert tier["actorUsername"] == done.admin and tier["subjectUsername"] == done.username
    assert tier["ip"] == ADMIN_IP and tier["details"] == {"from": 6, "to": 3}

    assert rotated["actorUsername"] == rotated["subjectUsername"] == done.username
    assert rotated["ip"] == USER_IP and set(rotated["details"]) == {"callbackId"}
    assert rotated["at"] > tier["at"] > succeeded["at"] > failed["at"]
    # the test clock's time, in Italian time as every date of the API
    assert failed["at"] == done.start.astimezone(ZoneInfo("Europe/Rome")).isoformat(timespec="milliseconds")


def test_filters_and_pages(client, scenario):
    done, reader = scenario
    mine = {"username": done.username, "from": done.start.isoformat()}

    def kinds(**params: str) -> list[str]:
        answer = read(client, reader, **params)
        assert answer.status_code == 200, answer.text
        return [e["kind"] for e in answer.json()["content"]]

    assert kinds(**mine, kind="auth.signin") == ["auth.signin.succeeded", "auth.signin.failed"]
    assert kinds(**mine, kind="auth.signin.failed") == ["auth.signin.failed"]
    assert kinds(**mine, kind="auth.sign") == []  # a prefix is a whole dotted part
    assert kinds(**mine, kind="account") == ["account.tier.changed"]
    assert kinds(**mine, ip=USER_IP) == [
        "callback.secret.rotated",
        "auth.signin.succeeded",
        "auth.signin.failed",
    ]
    assert kinds(**mine, ip=ADMIN_IP) == ["account.tier.changed"]
    # the set-up, before the scenario: the account created by varco, a sign-in, the callback endpoint
    before = (done.start - timedelta(seconds=1)).isoformat()
    assert kinds(username=done.username, to=before) == [
        "callback.created",
        "auth.signin.succeeded",
        "account.created",
    ]
    assert kinds(username=done.admin, kind="auth.password") == ["auth.password.changed"]

    first = read(client, reader, **mine, size="3").json()
    assert [len(first["content"]), first["totalElements"], first["totalPages"]] == [3, 4, 2]
    assert (first["first"], first["last"], first["size"], first["numberOfElements"]) == (True, False, 3, 3)
    second = read(client, reader, **mine, size="3", page="2").json()
    assert [e["kind"] for e in second["content"]] == ["auth.signin.failed"]
    assert (second["number"], second["first"], second["last"]) == (2, False, True)
    beyond = read(client, reader, **mine, size="3", page="9").json()
    assert beyond["content"] == [] and beyond["totalElements"] == 4


def test_only_operators_read_the_trail(client):
    token = sign_in(client, make_account().username)
    refused = client.get("/api/v2/admin/audit", headers=bearer(token))
    assert refused.status_code == 403
    assert refused.json()["errorCode"] == "0012" and "operators" in refused.json()["errorDescription"]
    assert client.get("/api/v2/admin/audit").status_code == 401


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"kind": "Auth!"}, "kind"),
        ({"kind": "a" * 65}, "kind"),
        ({"ip": "203.0.113"}, "ip"),
        ({"from": "yesterday"}, "from"),
        ({"to": "2026-02-30"}, "to"),
        ({"from": "2026-11-24", "to": "2026-11-23"}, "from is after to"),
        ({"page": "0"}, "page"),
        ({"page": "-1"}, "page"),
        ({"size": "101"}, "size"),
        ({"size": "ten"}, "size"),
        ({"page": "9" * 40}, "page"),
        ({"username": "u" * 151}, "username"),
        ({"username": "nul\x00name"}, ""),
    ],
)
def test_bad_parameters_are_a_400_naming_them(client, params, named):
    reader = sign_in(client, make_account(is_admin=True).username)
    answer = read(client, reader, **params)
    assert answer.status_code == 400, answer.text
    assert answer.json()["errorCode"] == "0002" and named in answer.json()["errorDescription"]


HOSTILE = [" ", "\x00", "%00", "٣", "³", "1_0", "+1", "-0", "9" * 5000, "' OR 1=1 --", "auth.%", "auth._"]
HOSTILE += ["ü" * 200, "0001-01-01", "9999-12-31T23:59:59.9999999", "2026-11-23T25:00", "::ffff:203.0.113.7"]


def test_hostile_values_are_answered_never_a_500(client):
    reader = sign_in(client, make_account(is_admin=True).username)
    answers = {
        (name, value[:20]): read(client, reader, **{name: value}).status_code
        for name in ("kind", "username", "ip", "from", "to", "page", "size")
        for value in HOSTILE
    }
    assert {status for status in answers.values()} <= {200, 400}, answers


def test_no_password_token_or_secret_in_the_table_or_the_logs(app, client, clock, caplog):
    caplog.set_level(logging.DEBUG, logger="varco")
    caplog.set_level(logging.INFO)
    user, operator = clients(app)
    done = run_scenario(user, operator, clock)
    token = sign_in(user, done.username)
    refreshed = user.post(
        "/auth/signin", data={"grant_type": "refresh_token", "refresh_token": token["refresh_token"]}
    )
    assert refreshed.status_code == 200
    done.secrets += [token["access_token"], token["refresh_token"]]
    done.secrets += [refreshed.json()["access_token"], refreshed.json()["refresh_token"]]
    assert len(set(done.secrets)) == len(done.secrets) and all(len(s) >= 9 for s in done.secrets)

    with unit_of_work() as session:
        rows = session.scalars(select(AuditEvent)).all()
        table = [
            json.dumps(
                {column.name: getattr(row, column.key) for column in AuditEvent.__table__.columns},
                default=str,
            )
            for row in rows
        ]
    assert any(done.username in row and "auth.token.refreshed" in row for row in table)  # not vacuous
    logged = [caplog.text] + [json.dumps(vars(record), default=str) for record in caplog.records]
    assert any("audit event" in line and done.username in line for line in logged)
    for secret in done.secrets:
        assert not [row for row in table if secret in row], "a secret in the audit table"
        assert not [line for line in logged if secret in line], "a secret in the logs"


def test_a_name_that_is_no_account_is_kept_as_a_digest(app, client, caplog):
    """People type their password into the user name field: a refused sign-in keeps the typed name
    only when it names an account; another name becomes a keyed digest, the same for each try."""
    caplog.set_level(logging.INFO)
    user, _ = clients(app)
    account, admin = make_account(), make_account(is_admin=True)
    typed = "Correct-Horse-Battery-9"  # the password, typed as the user name
    for name in (typed, typed, account.username):
        refused = user.post(
            "/auth/signin", data={"grant_type": "password", "username": name, "password": "x"}
        )
        assert refused.status_code in (400, 401), refused.text
    events = read(client, sign_in(client, admin.username), kind="auth.signin.failed").json()["content"]
    subjects = [e["subjectUsername"] for e in reversed(events[:3])]  # newest first: this test's three
    assert subjects[2] == account.username
    assert subjects[0] == subjects[1] and subjects[0].startswith("unknown user #") and len(subjects[0]) == 30
    with unit_of_work() as session:
        stored = [
            json.dumps(row.details) + str(row.subject_username) for row in session.scalars(select(AuditEvent))
        ]
    assert not [row for row in stored if typed in row]
    assert typed not in caplog.text
