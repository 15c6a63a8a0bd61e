"""Which outcome the simulated SDI produces: rules by file name, by recipient code, or a default.

Without any rule: every file is delivered (RC) and a PA accepts it (NE EC01); customer outcomes
are accepted. A file-name rule beats a recipient-code rule, which beats the default rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy import Row, and_, bindparam, delete, or_, select

from varco.core.clock import Clock
from varco.core.errors import BadRequest
from varco.core.uow import Fact, UnitOfWork
from varco.sdi.models import SimScenario

OUTCOMES = ("RC", "MC", "NS", "AT", "NE-EC01", "NE-EC02", "DT")
ESITO_OUTCOMES = ("ACCEPT", "SE")
# Financial communications (docs/comfin.md): a "comfin" rule, value "" (all), LI, DF or a file name.
COMFIN_OUTCOMES = ("ES01", "ES02", "ES03")
KINDS = ("filename", "recipient_code", "default", "comfin")
_PRECEDENCE = {"filename": 0, "recipient_code": 1, "default": 2, "comfin": 3}
_SCENARIO = SimScenario.__table__.c
# The rules that may apply to one file, built once (every simulated file runs it).
_RULES_FOR = select(
    _SCENARIO.kind, _SCENARIO.outcome, _SCENARIO.esito_outcome, _SCENARIO.delay_seconds
).where(
    or_(
        _SCENARIO.kind == "default",
        and_(_SCENARIO.kind == "filename", _SCENARIO.value == bindparam("filename")),
        and_(_SCENARIO.kind == "recipient_code", _SCENARIO.value == bindparam("recipient_code")),
    )
)

# Most installations have no rule or a handful: a transaction reads them all once (a batch of files,
# core/jobs.py, then asks nothing per file); with more than this many it asks per file.
_FEW = 200
_ALL_RULES = select(
    _SCENARIO.kind, _SCENARIO.value, _SCENARIO.outcome, _SCENARIO.esito_outcome, _SCENARIO.delay_seconds
).limit(_FEW + 1)
_READ: Fact[dict[str, list[Row[Any]] | None]] = Fact("simulator rules", dict, forget_on=(SimScenario,))


class InvalidScenario(BadRequest):
    """Invalid simulator scenario."""


@dataclass(frozen=True)
class Scenario:
    outcome: str = "RC"
    esito_outcome: str = "ACCEPT"
    delay: timedelta = timedelta()


@dataclass(frozen=True)
class Rule:
    kind: str
    value: str
    outcome: str | None
    esito_outcome: str | None
    delay: timedelta


def set_rule(
    session: UnitOfWork,
    kind: str,
    value: str,
    clock: Clock,
    *,
    outcome: str | None = None,
    esito_outcome: str | None = None,
    delay: timedelta = timedelta(),
) -> Rule:
    """Create or replace the rule for (kind, value)."""
    if kind not in KINDS:
        raise InvalidScenario(f"invalid rule kind {kind!r}: one of {', '.join(KINDS)}")
    value = "" if kind == "default" else value.strip()
    if kind not in ("default", "comfin") and not value:
        raise InvalidScenario(f"a {kind} rule needs a value")
    allowed = COMFIN_OUTCOMES if kind == "comfin" else OUTCOMES
    if outcome is not None and outcome.upper() not in allowed:
        raise InvalidScenario(f"invalid outcome {outcome!r}: one of {', '.join(allowed)}")
    if esito_outcome is not None and esito_outcome.upper() not in ESITO_OUTCOMES:
        raise InvalidScenario(f"invalid esito outcome {esito_outcome!r}: one of {', '.join(ESITO_OUTCOMES)}")
    if outcome is None and esito_outcome is None:
        raise InvalidScenario("a rule needs an outcome and/or an esito outcome")
    if delay < timedelta():
        raise InvalidScenario("the delay must not be negative")
    row = session.scalar(select(SimScenario).where(SimScenario.kind == kind, SimScenario.value == value))
    if row is None:
        row = SimScenario(kind=kind, value=value, created_at=clock.now())
        session.add(row)
    row.outcome = outcome.upper() if outcome else None
    row.esito_outcome = esito_outcome.upper() if esito_outcome else None
    row.delay_seconds = int(delay.total_seconds())
    session.flush()
    return _rule(row)


def list_rules(session: UnitOfWork) -> list[Rule]:
    rows = session.scalars(select(SimScenario)).all()
    return sorted((_rule(r) for r in rows), key=lambda r: (_PRECEDENCE[r.kind], r.value))


def clear(session: UnitOfWork, kind: str | None = None, value: str | None = None) -> int:
    """Delete one rule, or all of them; returns how many were deleted."""
    query = delete(SimScenario)
    if kind is not None:
        query = query.where(
            SimScenario.kind == kind, SimScenario.value == ("" if kind == "default" else value)
        )
    session.forget(_READ)  # a Core delete: the read rules would not know
    return session.execute(query).rowcount or 0


def resolve(session: UnitOfWork, filename: str, recipient_code: str | None) -> Scenario:
    """The scenario for one file: the most specific rule field by field, then the built-in default."""
    few = _few_rules(session)
    if few is None:
        params = {"filename": filename, "recipient_code": recipient_code or None}
        found: list[Row[Any]] = list(session.execute(_RULES_FOR, params))
    else:  # what _RULES_FOR selects
        wanted = {("default", ""), ("filename", filename), ("recipient_code", recipient_code or None)}
        found = [r for r in few if (r.kind, r.value if r.kind != "default" else "") in wanted]
    rows = sorted(found, key=lambda r: _PRECEDENCE[r.kind])
    outcome = next((r for r in rows if r.outcome), None)
    esito = next((r.esito_outcome for r in rows if r.esito_outcome), None)
    return Scenario(
        outcome=outcome.outcome if outcome and outcome.outcome else "RC",
        esito_outcome=esito or "ACCEPT",
        delay=timedelta(seconds=outcome.delay_seconds) if outcome else timedelta(),
    )


def _few_rules(session: UnitOfWork) -> list[Row[Any]] | None:
    """Every rule, read once per transaction, when there are at most _FEW; else None."""
    read = session.fact(_READ)
    if "rules" not in read:
        rows = list(session.execute(_ALL_RULES))
        read["rules"] = rows if len(rows) <= _FEW else None
    return read["rules"]


def _rule(row: SimScenario) -> Rule:
    return Rule(row.kind, row.value, row.outcome, row.esito_outcome, timedelta(seconds=row.delay_seconds))
