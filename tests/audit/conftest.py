"""Audit tests drive the simulator's controls on the session's shared database: leave no scenario
rule or clock offset behind (the same clean-up as the SDI tests')."""

from tests.sdi.conftest import _clean_simulator  # noqa: F401 - an autouse fixture
