"""The Exchange System's own controls (Allegato A, "Elenco controlli") beyond the contract's codes.

A rule family of its own, registered like the contract's rules: one small function per control
with its code, official description and fix hint (`registry.control`). They never change the
intermediary's upload answers: the simulated SDI refuses with them (NS), `varco validate` reports
them as stage "sdi", and an account may ask for them at upload (`preflightSdiControls`).
Controls that need national registers are approximated by syntax and check digit, and say so.
The table: docs/sdi-controls.md.
"""

from varco.fatturapa.sdi_controls import amounts, duplicates, identities  # noqa: F401  (registers)
from varco.fatturapa.sdi_controls.duplicates import keys_of
from varco.fatturapa.sdi_controls.files import TEXTS as FILE_CONTROLS
from varco.fatturapa.sdi_controls.registry import CONTROLS, ControlSpec, InvoiceKey, SdiFacts
from varco.fatturapa.sdi_controls.run import check_sdi

__all__ = ["CONTROLS", "FILE_CONTROLS", "ControlSpec", "InvoiceKey", "SdiFacts", "check_sdi", "keys_of"]
