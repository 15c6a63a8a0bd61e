"""Operator controls of the simulator, shared by the CLI and the admin API."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from varco.core import jobs
from varco.core.clock import Clock
from varco.core.uow import UnitOfWork
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import engine, scenarios


@dataclass(frozen=True)
class ClockState:
    simulated_now: datetime
    offset: timedelta


def rule_target(recipient_code: str | None, filename: str | None, default: bool) -> tuple[str, str]:
    """(kind, value) from exactly one of the three ways to name a rule."""
    given = [x for x in (recipient_code, filename) if x] + (["default"] if default else [])
    if len(given) != 1:
        raise scenarios.InvalidScenario(
            "name exactly one of: a recipient code, a file name, or the default rule"
        )
    if recipient_code:
        return "recipient_code", recipient_code.strip().upper()
    if filename:
        return "filename", filename.strip()
    return "default", ""


def set_scenario(
    session: UnitOfWork,
    clock: Clock,
    *,
    recipient_code: str | None = None,
    filename: str | None = None,
    default: bool = False,
    outcome: str | None = None,
    esito_outcome: str | None = None,
    delay: str | None = None,
) -> scenarios.Rule:
    kind, value = rule_target(recipient_code, filename, default)
    return scenarios.set_rule(
        session,
        kind,
        value,
        clock,
        outcome=outcome,
        esito_outcome=esito_outcome,
        delay=sim_clock.parse_duration(delay) if delay else timedelta(),
    )


def rule_details(rule: scenarios.Rule) -> dict[str, str | None]:
    """What the audit trail keeps of a rule an operator set (`sdi.scenario.set`)."""
    return {
        "rule": rule.kind,
        "value": rule.value,
        "outcome": rule.outcome,
        "esitoOutcome": rule.esito_outcome,
        "delay": sim_clock.format_duration(rule.delay),
    }


def cleared_details(recipient_code: str | None, filename: str | None, default: bool, deleted: int) -> dict:
    """What the audit trail keeps of a deletion of rules (`sdi.scenario.deleted`)."""
    named = recipient_code or filename or ("default" if default else None)
    return {"rule": "one" if named else "all", "value": named, "deleted": deleted}


def clear_scenarios(
    session: UnitOfWork,
    *,
    recipient_code: str | None = None,
    filename: str | None = None,
    default: bool = False,
) -> int:
    if not (recipient_code or filename or default):
        return scenarios.clear(session)
    kind, value = rule_target(recipient_code, filename, default)
    return scenarios.clear(session, kind, value)


def clock_state(session: UnitOfWork, clock: Clock) -> ClockState:
    return ClockState(sim_clock.sim_now(session, clock), sim_clock.offset(session))


def advance(session: UnitOfWork, duration: str, clock: Clock) -> tuple[ClockState, int]:
    """Move simulated time and queue what became due (run after the commit by a worker)."""
    sim_clock.advance(session, sim_clock.parse_duration(duration), clock)
    due = len(engine.due_files(session, clock))
    jobs.enqueue(session, engine.TICK, clock=clock)
    return clock_state(session, clock), due
