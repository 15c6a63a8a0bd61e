"""Imports every module that registers background job handlers or reconcilers (workers need them all)."""

from varco.accounts.multisellers import report  # noqa: F401
from varco.callbacks import tasks as callbacks_tasks  # noqa: F401
from varco.comfin import tasks as comfin_tasks  # noqa: F401
from varco.invoices import processing  # noqa: F401
from varco.limits import annual  # noqa: F401 - locks accounts when usage reaches the limit
from varco.mail import delivery, receipts  # noqa: F401 - receipts: e-mail receipt reconciler
from varco.preservation import tasks as preservation_tasks  # noqa: F401
from varco.sdi import esito, received  # noqa: F401
from varco.sdi.simulator import comfin as sim_comfin  # noqa: F401
from varco.sdi.simulator import engine, outcomes  # noqa: F401
from varco.search import downloads as search_downloads  # noqa: F401
