"""Asynchronous extra-schema rules of §7.3 (reported under FATRSM212). Import each module here.

Importing this package registers every rule in `varco.fatturapa.rules.registry.RULES`; the
table of rules with their element numbers and decisions is `docs/extra-schema-rules.md`.
"""

from varco.fatturapa.rules.async_rules import (  # noqa: F401  (imported to register the rules)
    dates,
    discounts,
    natura,
    numbering,
    parties,
    simplified,
    tax_ids,
    transmission,
    vat_rates,
    withholding,
)
