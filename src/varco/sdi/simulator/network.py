"""Where the simulated SDI's messages go.

In-process (the default, `VARCO_SDI_CHANNEL=simulator`) the simulator shares varco's database and
applies its notifications there directly (`files.notify_sender`). The SDICoop face
(`simulator/soap/`, `varco sdi serve-sdicoop`) is a process of its own: its files come in over
SOAP (origin "soap") and what it says about them goes out over SOAP, through the `Network` that
process installs here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from varco.core.clock import Clock
from varco.core.uow import UnitOfWork

if TYPE_CHECKING:
    from varco.sdi.models import SimFile


class Network(Protocol):
    def notify(
        self, session: UnitOfWork, file: SimFile, type_: str, name: str, xml: bytes, clock: Clock
    ) -> None:
        """Send a message on `file` (RC, NS, MC, NE, DT, AT) to the intermediary that sent it."""
        ...

    def hand_over(self, session: UnitOfWork, file: SimFile, clock: Clock) -> bool:
        """Deliver `file` to the intermediary its recipient code belongs to, from a job; False
        when no intermediary takes that code (the recipient is simulated)."""
        ...


_network: Network | None = None


def use(network: Network | None) -> None:
    """Install the SDICoop face's network (its entry point does; None goes back to in-process)."""
    global _network
    _network = network


def current() -> Network | None:
    return _network


def required() -> Network:
    if _network is None:
        raise RuntimeError("a file that came in over SOAP, and no SDICoop network installed")
    return _network
