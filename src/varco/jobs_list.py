"""Every job and reconciler varco runs, from an explicit list of the domains' `tasks` modules.

The entry points that run jobs (`varco serve` in embedded mode, `varco worker`, the app factory
for tests and the CLI) build the registry from here; nothing registers a job by being imported.
"""

from __future__ import annotations

from varco.accounts.multisellers import tasks as multisellers_tasks
from varco.callbacks import tasks as callbacks_tasks
from varco.comfin import tasks as comfin_tasks
from varco.core import jobs
from varco.invoices import tasks as invoices_tasks
from varco.mail import tasks as mail_tasks
from varco.preservation import tasks as preservation_tasks
from varco.sdi import tasks as sdi_tasks
from varco.sdi.simulator import tasks as simulator_tasks
from varco.search import tasks as search_tasks

DOMAINS = (
    invoices_tasks,
    sdi_tasks,
    simulator_tasks,
    mail_tasks,
    callbacks_tasks,
    comfin_tasks,
    preservation_tasks,
    multisellers_tasks,
    search_tasks,
)


def build() -> jobs.Registry:
    registry = jobs.Registry()
    for domain in DOMAINS:
        domain.register(registry)
    return registry


def install() -> jobs.Registry:
    """Build the registry and make it the one this process runs."""
    registry = build()
    jobs.use_registry(registry)
    return registry
