"""The unit of work: the session of one request or job, its one transaction, and every side effect
of that transaction, registered by the code that causes it.

A service is handed a `UnitOfWork` (a SQLAlchemy `Session` that is the unit of work) and says
what its change causes, where it causes it:

- `uow.before_commit(hook, key=...)`: run `hook(uow)` just before the COMMIT, in registration
  order (a hook may register more); if one raises, nothing of the transaction is stored. A key
  registers a hook once per transaction (e.g. one storage-space update for every file stored).
- `uow.written_at_commit(write).append(item)`: items gathered over the transaction, handed to
  `write(uow, items)` together just before the COMMIT (one statement for many rows); calling the
  list (`uow.written_at_commit(write)(uow)`) writes those gathered so far at once.
- `uow.on_commit(hook, key=...)`: run `hook()` once the COMMIT succeeded (a wake-up, an HTTP
  call); it must not raise, and what it does is not part of the transaction (a crash before it
  runs loses it: what must survive is a row written in the transaction, e.g. a job row).
- `uow.fact(FACT)`: a value read once per transaction (a locked row, a cache of look-ups), held
  until the transaction or a savepoint ends (a rollback to a savepoint may undo writes and lose
  row locks), and dropped when objects of its `forget_on` models are flushed. A `per_job` fact
  (one file's data) is also dropped between the jobs a worker runs in one transaction.

An after-commit hook runs in the context (request id, running job) of the code that registered it.

A rollback drops the hooks of the transaction. Commit with `uow.commit()` (as `unit_of_work()`
and the request dependency do), not through a `SessionTransaction` (`with uow.begin():`), which
would bypass the hooks. Jobs (`core/jobs.py`) and stored files (`core/blobs.py`) build on these;
nothing listens on SQLAlchemy's global `Session` class.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from contextvars import Context, copy_context
from typing import Any, Generic, TypeVar

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction

log = logging.getLogger("varco.uow")

T = TypeVar("T")
H = TypeVar("H", bound=Callable[["UnitOfWork"], None])
A = TypeVar("A", bound=Callable[[], None])


class Fact(Generic[T]):
    """A per-transaction fact: its value is `factory()` on first use (`uow.fact(F)`)."""

    def __init__(
        self,
        name: str,
        factory: Callable[[], T],
        *,
        forget_on: tuple[type, ...] = (),
        per_job: bool = False,
    ) -> None:
        self.name = name
        self.factory = factory
        self.forget_on = forget_on  # flushing new, changed or deleted objects of these drops it
        self.per_job = per_job  # dropped between the jobs of a batch (core/jobs.py): one file's data

    def __repr__(self) -> str:
        return f"Fact({self.name!r})"


class _Gathered(list):  # type: ignore[type-arg]
    """Items gathered for one writer (`UnitOfWork.written_at_commit`); called, it writes them."""

    def __init__(self, write: Callable[[UnitOfWork, list[Any]], None]) -> None:
        super().__init__()
        self.write = write

    def __call__(self, uow: UnitOfWork) -> None:
        items = self[:]
        self.clear()
        if items:
            self.write(uow, items)


class UnitOfWork(Session):
    """A session whose transaction commits once, with its side effects registered on it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._before: dict[Hashable, Callable[[UnitOfWork], None]] = {}
        self._after: dict[Hashable, tuple[Callable[[], None], Context]] = {}
        self._facts: dict[Fact[Any], Any] = {}
        self._watched: dict[Fact[Any], tuple[type, ...]] = {}
        # core/jobs.py: the job ids to wake after the commit (kept when a savepoint rolls back:
        # a wake-up of a job row that is not there does nothing), the follow-ons of the running
        # job, and whether a worker runs a job's first attempt in this session.
        self.wake_ups: list[int] = []
        self.follow_ons: list[tuple[Any, dict[str, Any]]] = []
        self.running: str | None = None  # "first attempt" | "retry" while a worker runs a job
        self.commits_on_event_loop = False  # core/turns.py: its wake-ups must not wait
        # core/blobs.py: bytes stored per account, added to storage_usage at commit
        self.stored_bytes: dict[int, int] = {}

    # -- hooks ---------------------------------------------------------------------------------

    def before_commit(self, hook: H, *, key: Hashable | None = None) -> H:
        """Run `hook(uow)` before this transaction's COMMIT, once per key: returns the hook
        registered under the key (a hook may be an object that gathers what it will check)."""
        return self._before.setdefault(hook if key is None else key, hook)  # type: ignore[return-value]

    def written_at_commit(self, write: Callable[[UnitOfWork, list[Any]], None]) -> _Gathered:
        """This transaction's items for `write`, which gets them before the COMMIT (once per `write`)."""
        return self.before_commit(_Gathered(write), key=write)

    def on_commit(self, hook: A, *, key: Hashable | None = None) -> A:
        """Run `hook()` after this transaction's COMMIT succeeded (once per key); never raises.
        Returns the hook registered under the key (one that gathers, as `before_commit`)."""
        registered = self._after.setdefault(hook if key is None else key, (hook, copy_context()))
        return registered[0]  # type: ignore[return-value]

    def commit(self) -> None:
        while self._before:  # in registration order; a hook may register others
            key = next(iter(self._before))
            self._before.pop(key)(self)
        hooks, self._after = self._after, {}  # taken first: the end of the transaction drops them
        super().commit()
        for hook, context in hooks.values():
            try:
                context.run(hook)
            except Exception:  # committed: what a hook failed to do is recovered elsewhere
                log.exception("after-commit hook %s failed", getattr(hook, "__qualname__", hook))

    # -- facts ---------------------------------------------------------------------------------

    def fact(self, fact: Fact[T]) -> T:
        """This transaction's value of `fact`."""
        if fact.forget_on and fact in self._facts and self._pending_of(fact.forget_on):
            self.flush()  # drops it: what it was read from is about to change
        if fact not in self._facts:
            if fact.forget_on:
                if self._pending_of(fact.forget_on):
                    self.flush()  # read after the pending changes, never before them
                self._watched[fact] = fact.forget_on
            self._facts[fact] = fact.factory()
        return self._facts[fact]

    def remember(self, fact: Fact[T], value: T) -> T:
        """Set this transaction's value of `fact` (a value the transaction itself has just written)."""
        self._facts[fact] = value
        return value

    def end_job(self) -> None:
        """The running job's work is done; another may follow in this transaction (core/jobs.py)."""
        for fact in [fact for fact in self._facts if fact.per_job]:
            self.forget(fact)

    def forget(self, fact: Fact[Any]) -> None:
        self._facts.pop(fact, None)
        self._watched.pop(fact, None)

    def flush(self, objects: Any = None) -> None:
        # Autoflush comes here too: a fact read from rows about to change is dropped first.
        if self._watched:
            for fact, models in list(self._watched.items()):
                if self._pending_of(models):
                    self.forget(fact)
        super().flush(objects)

    def _pending_of(self, models: tuple[type, ...]) -> bool:
        pending = (self.new, self.dirty, self.deleted)
        return any(isinstance(instance, models) for objects in pending for instance in objects)

    def _ended(self, transaction: SessionTransaction) -> None:
        if transaction.nested:  # a savepoint: its rollback may undo writes and release locks
            self._facts.clear()
            self._watched.clear()
        elif transaction.parent is None:  # committed or rolled back: a new transaction starts clean
            # New objects, not cleared ones: an after-commit hook may still hold the old ones.
            self._facts, self._watched, self._before, self._after = {}, {}, {}, {}
            self.wake_ups, self.follow_ons, self.stored_bytes = [], [], {}


@event.listens_for(UnitOfWork, "after_transaction_end")
def _transaction_ended(session: Session, transaction: SessionTransaction) -> None:
    # SQLAlchemy reports the end of a savepoint only through this event, on this class only.
    if isinstance(session, UnitOfWork):
        session._ended(transaction)
