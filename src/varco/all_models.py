"""Imports every table so that Base.metadata is complete (Alembic, tests)."""

from varco.accounts import models as accounts_models  # noqa: F401
from varco.accounts.multisellers import models as multisellers_models  # noqa: F401
from varco.audit import models as audit_models  # noqa: F401
from varco.auth import models as auth_models  # noqa: F401
from varco.callbacks import models as callbacks_models  # noqa: F401
from varco.comfin import models as comfin_models  # noqa: F401
from varco.core import blobs as core_blobs  # noqa: F401
from varco.core import models as core_models  # noqa: F401
from varco.core.db import Base
from varco.events import models as events_models  # noqa: F401
from varco.invoices import models as invoices_models  # noqa: F401
from varco.limits import models as limits_models  # noqa: F401
from varco.mail import models as mail_models  # noqa: F401
from varco.panel import models as panel_models  # noqa: F401
from varco.preservation import models as preservation_models  # noqa: F401
from varco.sdi import models as sdi_models  # noqa: F401
from varco.sdi.simulator import comfin as sdi_sim_comfin  # noqa: F401
from varco.search import models as search_models  # noqa: F401

metadata = Base.metadata
