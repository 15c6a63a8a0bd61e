"""What every `varco` sub-command shares: one-line errors, settings, a ready database."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import typer
from pydantic import ValidationError

from varco import jobs_list
from varco.core import migrate
from varco.core.db import get_database
from varco.core.errors import VarcoError
from varco.settings import Settings, get_settings


def fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


@contextlib.contextmanager
def cli_errors() -> Iterator[None]:
    """Service errors become one line and exit code 2."""
    try:
        yield
    except VarcoError as exc:
        fail(str(exc))


def settings_or_exit() -> Settings:
    try:
        return get_settings()
    except ValidationError as exc:
        fail("invalid configuration: " + "; ".join(_problem(error) for error in exc.errors()))


def _problem(error: Mapping[str, Any]) -> str:
    """One setting's error, named as the operator wrote it (`VARCO_JOB_BATCH: ...`); a check of
    several settings together has no single name, and its message names them."""
    where = error.get("loc") or ()
    return f"VARCO_{str(where[0]).upper()}: {error['msg']}" if where else str(error["msg"])


def prepare_database() -> None:
    """Bring the schema to the latest migration (idempotent); the jobs this process runs (a
    command may run them: `sdi advance` runs the steps that became due)."""
    settings_or_exit()
    jobs_list.install()
    try:
        migrate.upgrade(get_database().url)
    except migrate.UnknownSchema as exc:
        fail(str(exc))
