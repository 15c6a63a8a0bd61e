"""`varco delegations create | set-status | list | history`; wrong values: one line, exit code 2."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from tests.accounts.delegation_support import delegate, history, status_of
from tests.factories import make_account, make_basic, sign_in
from varco.accounts.models import DelegationStatus
from varco.cli import app

runner = CliRunner()
S = DelegationStatus


def run(*args: str):
    return runner.invoke(app, list(args))


def created_id(output: str) -> int:
    match = re.match(r"delegation (\d+): ", output)
    assert match, output
    return int(match.group(1))


def test_create_approve_suspend_and_list(db, clock):
    premium, basic = make_account(), make_basic()
    result = run("delegations", "create", basic.username, premium.username, "--status", "pending")
    assert result.exit_code == 0, result.output
    number = created_id(result.output)
    assert f"{basic.username} -> {premium.username} PENDING" in result.output
    approved = run("delegations", "set-status", str(number), "ACTIVE")
    assert approved.exit_code == 0, approved.output
    assert approved.output.strip() == f"delegation {number}: PENDING -> ACTIVE (approve)"
    assert run("delegations", "set-status", str(number), "suspend").exit_code == 0
    assert status_of(number) == S.SUSPEND
    assert [e for e, _, _ in history(number)] == ["request", "approve", "suspend"]
    listed = run("delegations", "list", basic.username)
    assert listed.exit_code == 0
    [line] = listed.output.splitlines()
    assert line.startswith(
        f"{number}\t{basic.username} -> {premium.username}\tSUSPEND\tcreated 2026-11-23T08:00:00"
    )
    shown = run("delegations", "history", str(number))
    assert [line.split("\t")[1:3] for line in shown.output.splitlines()] == [
        ["request", "- -> PENDING"],
        ["approve", "PENDING -> ACTIVE"],
        ["suspend", "ACTIVE -> SUSPEND"],
    ]
    assert all(line.endswith("\tcli") for line in shown.output.splitlines())


def test_create_is_active_by_default_and_lets_the_basic_user_in(client):
    premium, basic = make_account(), make_basic()
    result = run("delegations", "create", basic.username, premium.username)
    assert result.exit_code == 0 and result.output.strip().endswith("ACTIVE")
    assert sign_in(client, basic.username)["userName"] == basic.username


def test_list_without_a_user_shows_every_delegation_and_with_one_only_its_own(db, clock):
    premium = make_account()
    mine = delegate(make_basic(), premium)
    other = delegate(make_basic(), make_account())
    everything = run("delegations", "list").output
    assert f"\n{mine.id}\t" in f"\n{everything}" and f"\n{other.id}\t" in f"\n{everything}"
    only = run("delegations", "list", premium.username).output
    assert [int(line.split("\t")[0]) for line in only.splitlines()] == [mine.id]


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["create", "{basic}", "{premium}", "--status", "SUSPEND"], "a new delegation is ACTIVE or PENDING"),
        (["create", "{basic}", "{premium}", "--status", "bogus"], "invalid delegation status 'bogus'"),
        (["create", "{basic}", "nobody-x", "--status", "ACTIVE"], "no account named 'nobody-x'"),
        (["create", "{premium}", "{basic}"], "not a Premium user"),
        (["create", "{premium}", "{premium}"], "cannot delegate itself"),
        (["set-status", "abc", "ACTIVE"], "invalid delegation id 'abc'"),
        (["set-status", "999999999", "ACTIVE"], "no delegation with id 999999999"),
        (["set-status", "{link}", "ENABLED"], "invalid delegation status 'ENABLED'"),
        (["set-status", "{link}", "PENDING"], "cannot go from ACTIVE to PENDING"),
        (["set-status", "{link}", "ACTIVE"], "already ACTIVE"),
        (["list", "nobody-y"], "no account named 'nobody-y'"),
        (["history", "1.5"], "invalid delegation id '1.5'"),
        (["history", "0"], "invalid delegation id '0'"),
    ],
)
def test_invalid_values_exit_2_with_one_line(db, clock, args, fragment):
    premium, basic = make_account(), make_basic()
    link = delegate(make_basic(), make_account())
    names = {"basic": basic.username, "premium": premium.username, "link": str(link.id)}
    result = run("delegations", *[a.format(**names) for a in args])
    assert result.exit_code == 2, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.startswith("error: ") and fragment in result.output


def test_a_cycle_is_refused_by_the_cli(db, clock):
    first, second = make_account(), make_account()
    assert run("delegations", "create", first.username, second.username).exit_code == 0
    result = run("delegations", "create", second.username, first.username)
    assert result.exit_code == 2 and "cycle" in result.output


def test_unknown_subcommand_lists_the_commands(db):
    result = run("delegations")
    assert result.exit_code in (0, 2)
    assert all(word in result.output for word in ("create", "set-status", "list", "history"))
