"""§8.4 annual limit: lock when reached, 429 AR10 on further transmissions, one official e-mail,
operator unlock and tier changes. Small annual limits by configuration; both databases."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from tests.factories import bearer, make_account, make_basic, sign_in
from tests.invoices.support import SUPPLIER_VAT, b64, invoice_xml
from varco.accounts import service as accounts
from varco.auth.dependencies import Caller
from varco.cli import app as cli
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.core.deps import ClockDep, SessionDep
from varco.limits import annual, usage
from varco.limits.errors import LimitError
from varco.limits.models import AnnualLock
from varco.mail.models import MailMessage
from varco.settings import get_settings

TIERS = {
    0: [60, 3],
    1: [600, 5],
    2: [3000, 8],
    3: [6000, 10],
    4: [12000, 20],
    5: [18000, 50],
    6: [30000, 100],
}
runner = CliRunner()


@pytest.fixture
def small_limits(configure):
    configure(tiers=json.dumps(TIERS))


def upload(client, token, **fields):
    body = {"dataFile": b64(invoice_xml()), **fields}
    return client.post("/services/invoice/upload", json=body, headers=bearer(token))


def used(account) -> int:
    with unit_of_work() as session:
        return annual.used_transmissions(session, account.id, 2026)


def locks(account) -> list[AnnualLock]:
    with unit_of_work() as session:
        return list(session.scalars(select(AnnualLock).where(AnnualLock.account_id == account.id)))


def mails(account) -> list[MailMessage]:
    with unit_of_work() as session:
        return list(session.scalars(select(MailMessage).where(MailMessage.account_id == account.id)))


def test_reaching_the_limit_locks_refuses_and_mails_once(client, clock, queue, small_limits):
    account = make_account(vat_code=SUPPLIER_VAT, tier=0, pec="ufficio@pec.example.it")
    token = sign_in(client, account.username)
    assert [upload(client, token).json()["errorCode"] for _ in range(3)] == ["0000"] * 3
    [lock] = locks(account)
    assert (lock.year, lock.annual_limit, lock.used, lock.unlocked_at) == (2026, 3, 3, None)

    refused = upload(client, token)
    assert refused.status_code == 429
    body = refused.json()
    assert body["uploadFileName"] is None and body["errorCode"] == "AR10"
    assert "Annual limit reached: 3 accepted transmissions in 2026" in body["errorDescription"]
    new_year = datetime(2027, 1, 1, tzinfo=UTC) - clock.now()
    assert refused.headers["Retry-After"] == str(int(new_year.total_seconds()))
    assert upload(client, token, dryRun=True).status_code == 429  # any transmission attempt
    assert used(account) == 3
    assert client.get("/auth/userInfo", headers=bearer(token)).status_code == 200  # reading goes on

    [mail] = mails(account)
    assert mail.to_address == "ufficio@pec.example.it" and mail.delivered_at is None
    assert "annual limit of 3 transmissions reached" in mail.subject
    # The mail folder is the test worker's, shared with the tests it ran before (on PostgreSQL their
    # message ids start again at 1, at the same clock time): their files of this number go first.
    for earlier in (Path(get_settings().data_dir) / "mail").glob(f"*-{mail.id:06d}.eml"):
        earlier.unlink()
    queue.drain()
    queue.drain()
    [mail] = mails(account)
    assert mail.transport == "file" and mail.delivered_at == clock.now()
    eml = Path(mail.location).read_text()
    assert "To: ufficio@pec.example.it" in eml and "operational lock" in eml
    assert len(list(Path(mail.location).parent.glob(f"*-{mail.id:06d}.eml"))) == 1


def test_operator_unlock_lets_transmissions_through_for_the_year(client, clock, queue, small_limits):
    account = make_account(vat_code=SUPPLIER_VAT, tier=0)
    token = sign_in(client, account.username)
    for _ in range(3):
        upload(client, token)
    assert upload(client, token).status_code == 429
    result = runner.invoke(cli, ["users", "unlock", account.username])
    assert result.exit_code == 0, result.output
    assert f"unlocked {account.username}: 3 of 3 transmissions in 2026" in result.output
    assert [upload(client, token).json()["errorCode"] for _ in range(2)] == ["0000"] * 2
    assert used(account) == 5
    [lock] = locks(account)
    assert lock.unlocked_at == clock.now() and lock.unlocked_by.startswith("cli")
    assert len(mails(account)) == 1  # no new lock, no new e-mail at the same limit
    again = runner.invoke(cli, ["users", "unlock", account.username])
    assert again.exit_code == 2 and "is not locked" in again.output


def test_a_basic_users_transmissions_count_against_and_are_locked_by_its_premium(
    client, clock, queue, small_limits
):
    premium = make_account(tier=0, pec="premium@pec.example.it")
    basic = make_basic(delegate_to=premium, vat_code=SUPPLIER_VAT, tier=6)
    token = sign_in(client, basic.username)
    assert [upload(client, token).json()["errorCode"] for _ in range(3)] == ["0000"] * 3
    assert used(premium) == 3 and used(basic) == 0
    assert upload(client, token).json()["errorCode"] == "AR10"
    assert len(locks(premium)) == 1 and locks(basic) == []
    [mail] = mails(premium)
    assert mail.to_address == "premium@pec.example.it"


def test_a_charge_racing_past_an_active_lock_stores_nothing(client, clock, queue, small_limits):
    account = make_account(vat_code=SUPPLIER_VAT, tier=0)
    token = sign_in(client, account.username)
    for _ in range(3):
        upload(client, token)
    # a second upload that passed the pre-check before the lock existed, charging now
    with pytest.raises(LimitError, match="Annual limit reached"):
        with unit_of_work() as session:
            usage.charge(session, accounts.get(session, account.id), current_clock())
    assert used(account) == 3


def test_raising_the_tier_lifts_the_lock_and_the_new_limit_locks_again(client, clock, queue, small_limits):
    account = make_account(vat_code=SUPPLIER_VAT, tier=0)
    token = sign_in(client, account.username)
    for _ in range(3):
        upload(client, token)
    result = runner.invoke(cli, ["users", "set-tier", account.username, "1"])
    assert result.exit_code == 0, result.output
    assert "tier 1, 600 requests per hour, 5 transmissions per year (3 used in 2026)" in result.output
    assert "annual lock" not in result.output
    assert [upload(client, token).json()["errorCode"] for _ in range(3)] == ["0000", "0000", "AR10"]
    assert [(lock.annual_limit, lock.unlocked_by) for lock in locks(account)] == [(3, "tier 1"), (5, None)]
    assert len(mails(account)) == 2


def test_lowering_the_tier_below_the_usage_locks_at_once(client, clock, queue, small_limits):
    account = make_account(vat_code=SUPPLIER_VAT, tier=1)
    token = sign_in(client, account.username)
    for _ in range(4):
        upload(client, token)
    result = runner.invoke(cli, ["users", "set-tier", account.username, "0"])
    assert result.exit_code == 0 and "in annual lock" in result.output
    assert upload(client, token).json()["errorCode"] == "AR10"
    assert len(mails(account)) == 1


def test_a_new_year_starts_from_zero(client, clock, queue, small_limits):
    account = make_account(vat_code=SUPPLIER_VAT, tier=0)
    token = sign_in(client, account.username)
    for _ in range(3):
        upload(client, token)
    clock.set(datetime(2027, 1, 1, 0, 0, 1, tzinfo=UTC))
    token = sign_in(client, account.username)
    assert upload(client, token).json()["errorCode"] == "0000"


def test_cli_errors_are_one_line(client, small_limits):
    assert "no account named" in runner.invoke(cli, ["users", "unlock", "nobody-here"]).output
    result = runner.invoke(cli, ["users", "set-tier", make_account().username, "9"])
    assert result.exit_code == 2


def test_a_refusal_at_commit_is_a_429_answer(app, client, clock, queue, small_limits):
    @app.post("/test/charge-usage")
    def charge(caller: Caller, session: SessionDep, clock: ClockDep) -> dict:
        usage.charge(session, caller, clock)  # as an upload racing past the pre-check would
        return {"ok": True}

    account = make_account(tier=0)
    token = sign_in(client, account.username)
    assert [client.post("/test/charge-usage", headers=bearer(token)).status_code for _ in range(3)] == [
        200
    ] * 3
    refused = client.post("/test/charge-usage", headers=bearer(token))
    assert refused.status_code == 429
    assert (
        refused.json()["errorCode"] == "AR10" and "nothing was stored" in refused.json()["errorDescription"]
    )
    assert used(account) == 3
