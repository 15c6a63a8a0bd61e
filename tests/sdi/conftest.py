"""SDI tests share the database of the session: leave no scenario rule or clock offset behind."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from varco.core.db import Database, unit_of_work
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import scenarios


@pytest.fixture(autouse=True)
def _clean_simulator(db: Database) -> Iterator[None]:
    yield
    with unit_of_work() as session:
        scenarios.clear(session)
        sim_clock.reset(session)
