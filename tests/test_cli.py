"""The `varco` command line: users, db; one-line errors with exit code 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from tests.factories import sign_in, unique_name
from varco.cli import app

runner = CliRunner()


def run(*args: str):
    return runner.invoke(app, list(args))


def test_users_create_list_and_sign_in(client):
    name = unique_name()
    result = run(
        "users",
        "create",
        name,
        "--password",
        "pw-1",
        "--description",
        "Bianchi S.r.l.",
        "--vat-code",
        "12345670017",
        "--fiscal-code",
        "12345670017",
        "--pec",
        "b@pec.example.it",
        "--tier",
        "3",
        "--max-space-kb",
        "500",
        "--expires",
        "2027-06-30",
    )
    assert result.exit_code == 0, result.output
    assert f"created premium account {name}" in result.output
    listed = run("users", "list")
    line = next(line for line in listed.output.splitlines() if line.startswith(name))
    assert "premium" in line and "tier 3" in line and "IT12345670017" in line and "2027-06-30" in line
    info = client.get(
        "/auth/userInfo", headers={"Authorization": f"Bearer {sign_in(client, name, 'pw-1')['access_token']}"}
    )
    assert info.json()["usageStatus"]["maxSpaceKB"] == 500
    assert info.json()["userDescription"] == "Bianchi S.r.l."


def test_basic_user_created_with_flag(db, clock):
    name = unique_name()
    assert run("users", "create", name, "--password", "pw", "--basic").exit_code == 0
    assert "basic" in next(line for line in run("users", "list").output.splitlines() if line.startswith(name))


@pytest.mark.parametrize(
    "args,fragment",
    [
        (["--vat-code", "123"], "invalid Italian VAT number"),
        (["--country", "italy"], "invalid country code"),
        (["--pec", "not-an-email"], "invalid e-mail"),
        (["--expires", "31/12/2027"], "invalid --expires"),
        (["--fiscal-code", "XXXX"], "invalid Italian tax code"),
        (["--tier", "9"], "tier"),
    ],
)
def test_invalid_values_exit_2_with_one_line(db, clock, args, fragment):
    result = run("users", "create", unique_name(), "--password", "pw", *args)
    assert result.exit_code == 2
    assert fragment in result.output


def test_duplicate_username_exits_2(db, clock):
    name = unique_name()
    assert run("users", "create", name, "--password", "pw").exit_code == 0
    result = run("users", "create", name, "--password", "pw")
    assert result.exit_code == 2
    assert "already exists" in result.output


def test_disable_revokes_tokens_and_blocks_sign_in(client):
    name = unique_name()
    run("users", "create", name, "--password", "pw")
    token = sign_in(client, name, "pw")
    result = run("users", "disable", name)
    assert result.exit_code == 0 and "1 tokens revoked" in result.output
    assert (
        client.get("/auth/userInfo", headers={"Authorization": f"Bearer {token['access_token']}"}).status_code
        == 401
    )
    assert (
        client.post(
            "/auth/signin", data={"grant_type": "password", "username": name, "password": "pw"}
        ).status_code
        == 400
    )


def test_disable_unknown_user_exits_2(db, clock):
    result = run("users", "disable", "nobody-" + unique_name())
    assert result.exit_code == 2
    assert "no account named" in result.output


def test_db_upgrade_in_a_fresh_process(tmp_path):
    env = {**os.environ, "VARCO_DATA_DIR": str(tmp_path)}
    env.pop("VARCO_DATABASE_URL", None)
    varco = [sys.executable, "-m", "varco.cli"]
    done = subprocess.run([*varco, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "varco.sqlite3").exists()
    current = subprocess.run([*varco, "db", "current"], env=env, capture_output=True, text=True, timeout=120)
    from alembic.script import ScriptDirectory

    from varco.core.migrate import alembic_config

    script = ScriptDirectory.from_config(alembic_config("sqlite://"))
    printed = current.stdout.split()
    assert printed and all(script.get_revision(rev) is not None for rev in printed)
    # every revision is applied: upgrading again changes nothing
    again = subprocess.run([*varco, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and "up to date" in again.stdout


def test_a_data_dir_with_url_characters_holds_the_database(tmp_path):
    """`?`, `#` and `%` in VARCO_DATA_DIR are part of the path, not URL syntax."""
    data_dir = tmp_path / "odd?dir#x%41"
    data_dir.mkdir()
    env = {**os.environ, "VARCO_DATA_DIR": str(data_dir)}
    env.pop("VARCO_DATABASE_URL", None)
    varco = [sys.executable, "-m", "varco.cli"]
    done = subprocess.run([*varco, "db", "upgrade"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["odd?dir#x%41"]
    assert (data_dir / "varco.sqlite3").is_file()
    created = subprocess.run(
        [*varco, "users", "create", "odd-dir-user", "--password", "odd-dir-pw-123"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert created.returncode == 0, created.stderr
    listed = subprocess.run([*varco, "users", "list"], env=env, capture_output=True, text=True, timeout=120)
    assert "odd-dir-user" in listed.stdout


def _upgrade_with(tmp_path, **variables: str) -> subprocess.CompletedProcess[str]:
    """`varco db upgrade` in a process of its own, with these VARCO_* variables."""
    env = {**os.environ, "VARCO_DATA_DIR": str(tmp_path), **variables}
    command = [sys.executable, "-m", "varco.cli", "db", "upgrade"]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_production_profile_refuses_default_secret_and_sqlite(tmp_path):
    done = _upgrade_with(tmp_path, VARCO_PROFILE="production")
    assert done.returncode == 2
    assert "VARCO_SECRET_KEY" in done.stderr


@pytest.mark.parametrize(
    ("variable", "value", "fragment"),
    [
        ("VARCO_JOB_BATCH", "0", "greater than or equal to 1"),
        ("VARCO_JOB_BATCH", "many", "valid integer"),
        ("VARCO_EMBEDDED_WORKERS", "two", "valid integer"),
        ("VARCO_WORKER_NICE", "-5", "greater than or equal to 0"),  # would raise it, as root
        ("VARCO_WORKER_NICE", "20", "less than or equal to 19"),
    ],
)
def test_a_bad_setting_is_refused_by_name(tmp_path, variable, value, fragment):
    done = _upgrade_with(tmp_path, **{variable: value})
    assert done.returncode == 2
    assert f"{variable}: " in done.stderr and fragment in done.stderr, done.stderr
