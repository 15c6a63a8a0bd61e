"""Delegation life cycle (§3.3): the transition table, history rows, creation rules, cycles."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.accounts.delegation_support import delegate, history, payer_of, set_status, status_of
from tests.factories import make_account, make_basic
from varco.accounts import delegations, service
from varco.accounts.delegations import TRANSITIONS, DelegationError, IllegalTransition
from varco.accounts.models import Delegation, DelegationStatus
from varco.core.db import unit_of_work

S = DelegationStatus


def test_request_approve_suspend_resume_revoke_and_request_again(db, clock):
    premium = make_account()
    basic = make_basic()
    made = delegate(basic, premium, S.PENDING)
    created_at = made.created_at
    steps = [
        (S.ACTIVE, "approve"),
        (S.SUSPEND, "suspend"),
        (S.ACTIVE, "resume"),
        (S.INACTIVE, "revoke"),
        (S.PENDING, "request"),
    ]
    for target, _ in steps:
        clock.advance(timedelta(minutes=5))
        changed = set_status(made.id, target)
        assert changed.status == target
        assert changed.updated_at == clock.now()
    assert status_of(made.id) == S.PENDING
    assert history(made.id) == [
        ("request", None, "PENDING"),
        ("approve", "PENDING", "ACTIVE"),
        ("suspend", "ACTIVE", "SUSPEND"),
        ("resume", "SUSPEND", "ACTIVE"),
        ("revoke", "ACTIVE", "INACTIVE"),
        ("request", "INACTIVE", "PENDING"),
    ]
    with unit_of_work() as session:
        changes = delegations.history(session, made.id)
        assert changes[0].at == created_at and changes[-1].at == clock.now()
        assert [c.actor for c in changes[1:]] == ["test"] * len(steps)


def _in_state(state: DelegationStatus) -> Delegation:
    made = delegate(make_basic(), make_account(), S.PENDING)
    if state is S.INACTIVE:
        set_status(made.id, S.INACTIVE)
    elif state is not S.PENDING:
        set_status(made.id, S.ACTIVE)
        if state is S.SUSPEND:
            set_status(made.id, S.SUSPEND)
    assert status_of(made.id) == state
    return made


ALLOWED = {(source, target) for (source, _), target in TRANSITIONS.items() if source is not None}
REFUSED = [(a, b) for a in S for b in S if (a, b) not in ALLOWED]


@pytest.mark.parametrize("source,target", REFUSED, ids=[f"{a}->{b}" for a, b in REFUSED])
def test_moves_outside_the_table_are_refused_and_change_nothing(db, clock, source, target):
    made = _in_state(source)
    before = history(made.id)
    with pytest.raises(IllegalTransition) as refused:
        set_status(made.id, target)
    assert refused.value.status == 400
    assert str(source) in str(refused.value) and str(target) in str(refused.value)
    assert status_of(made.id) == source
    assert history(made.id) == before


def test_the_table_has_exactly_the_documented_moves():
    assert ALLOWED == {
        (S.PENDING, S.ACTIVE),
        (S.PENDING, S.INACTIVE),
        (S.ACTIVE, S.SUSPEND),
        (S.SUSPEND, S.ACTIVE),
        (S.ACTIVE, S.INACTIVE),
        (S.SUSPEND, S.INACTIVE),
        (S.INACTIVE, S.PENDING),
    }


@pytest.mark.parametrize(
    "status,events",
    [
        (S.PENDING, ["request"]),
        (S.ACTIVE, ["request", "approve"]),
        (S.SUSPEND, ["request", "approve", "suspend"]),
        (S.INACTIVE, ["request", "revoke"]),
    ],
)
def test_a_delegation_created_in_any_state_has_the_history_that_leads_there(db, clock, status, events):
    made = delegate(make_basic(), make_account(), status)
    assert made.status == status
    assert [event for event, _, _ in history(made.id)] == events


def test_only_premium_users_can_be_delegated(db, clock):
    with pytest.raises(DelegationError, match="not a Premium user"):
        delegate(make_account(), make_basic())


def test_an_account_cannot_delegate_itself(db, clock):
    premium = make_account()
    with pytest.raises(DelegationError, match="itself"):
        delegate(premium, premium)


def test_a_second_delegation_between_the_same_accounts_is_refused(db, clock):
    premium, basic = make_account(), make_basic()
    first = delegate(basic, premium, S.PENDING)
    with pytest.raises(DelegationError, match=f"already exists \\(id {first.id}, PENDING\\)"):
        delegate(basic, premium)


def test_unknown_delegation_is_not_found(db, clock):
    with pytest.raises(Exception, match="no delegation with id 999999999") as missing:
        set_status(999_999_999, S.ACTIVE)
    assert missing.value.status == 404


def test_status_values_are_parsed_case_insensitively_or_refused():
    assert delegations.parse_status(" suspend ") is S.SUSPEND
    with pytest.raises(DelegationError, match="choose one of ACTIVE, SUSPEND, INACTIVE, PENDING"):
        delegations.parse_status("ENABLED")


# Cycles (§8.5: the paying account must be defined) ------------------------------------------------------


def test_a_direct_cycle_is_refused(db, clock):
    first, second = make_account(), make_account()
    delegate(first, second)
    with pytest.raises(DelegationError, match="cycle"):
        delegate(second, first)


def test_a_cycle_through_a_three_hop_chain_is_refused_whatever_the_states(db, clock):
    a, b, c, d = (make_account() for _ in range(4))
    delegate(a, b)
    delegate(b, c, S.PENDING)  # a pending request may become ACTIVE: it counts
    delegate(c, d, S.SUSPEND)  # so may a suspended one
    with pytest.raises(DelegationError, match=f"{a.username} already delegates {d.username}"):
        delegate(d, a, S.PENDING)


def test_an_inactive_link_breaks_the_chain_until_it_is_requested_again(db, clock):
    a, b, c = (make_account() for _ in range(3))
    delegate(a, b)
    b_to_c = delegate(b, c)
    set_status(b_to_c.id, S.INACTIVE)
    back = delegate(c, a)  # no cycle while b -> c is INACTIVE
    assert back.status == S.ACTIVE
    with pytest.raises(DelegationError, match="cycle"):
        set_status(b_to_c.id, S.PENDING)
    assert status_of(b_to_c.id) == S.INACTIVE


def test_payer_follows_a_chain_without_looping(db, clock):
    a, b, c = (make_account() for _ in range(3))
    delegate(a, b)
    delegate(b, c)
    assert payer_of(a) == c.username and payer_of(b) == c.username and payer_of(c) == c.username


def test_the_payer_follows_a_delegation_changed_in_the_same_transaction(db, clock):
    # The payer is read once per transaction (an upload asks twice); a change made in it counts.
    basic, first, second = make_basic(), make_account(), make_account()
    active = delegate(basic, first)
    waiting = delegate(basic, second, S.PENDING)
    with unit_of_work() as session:
        taxpayer = service.get(session, basic.id)
        assert service.paying_account(session, taxpayer).username == first.username
        delegations.set_status(session, active.id, S.SUSPEND, clock, actor="test")
        assert service.paying_account(session, taxpayer).username == basic.username
        delegations.set_status(session, waiting.id, S.ACTIVE, clock, actor="test")
        assert service.paying_account(session, taxpayer).username == second.username


# One paying Premium user per taxpayer ---------------------------------------------------------------------


def test_a_taxpayer_has_at_most_one_active_delegation(db, clock):
    basic, first, second = make_basic(), make_account(), make_account()
    active = delegate(basic, first)
    waiting = delegate(basic, second, S.PENDING)  # a request may wait meanwhile
    with pytest.raises(DelegationError, match=f"ACTIVE delegation \\(id {active.id}, to {first.username}\\)"):
        set_status(waiting.id, S.ACTIVE)
    with pytest.raises(DelegationError, match="suspend or revoke it first"):
        delegate(basic, make_account())
    set_status(active.id, S.SUSPEND)
    set_status(waiting.id, S.ACTIVE)
    assert payer_of(basic) == second.username
    with pytest.raises(DelegationError, match="ACTIVE delegation"):
        set_status(active.id, S.ACTIVE)  # resuming the first would make two
