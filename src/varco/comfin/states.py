"""§3.2 request results and the moves between them (the contract shows none; docs/comfin.md)."""

from __future__ import annotations

from typing import Final

from varco.core.errors import VarcoError

# result -> status shown in §2.7 `status` (values not shown by the contract: docs/comfin.md)
STATUS: Final[dict[str, str]] = {
    "SF01": "ACCEPTED",  # becomes SENT (same result) once the SDI has the file
    "SF02": "PROCESSED",
    "SF03": "ERROR",
    "AR06": "ERROR",
    "AR07": "ERROR",
    "AR99": "ERROR",
}
# A late esito after AR07 is still recorded: the SDI did answer, only later than we waited.
MOVES: Final[dict[str, frozenset[str]]] = {
    "SF01": frozenset({"SF02", "SF03", "AR06", "AR07", "AR99"}),
    "AR07": frozenset({"SF02", "SF03"}),
}


class IllegalMove(VarcoError):
    """A communication request cannot move this way."""

    status, code = 409, "AR99"


def next_result(current: str, target: str) -> str:
    if target not in MOVES.get(current, frozenset()):
        raise IllegalMove(f"request result cannot move from {current} to {target}")
    return target
