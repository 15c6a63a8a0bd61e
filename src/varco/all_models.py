"""Imports every table so that Base.metadata is complete (Alembic, tests)."""

from varco.accounts import models as accounts_models  # noqa: F401
from varco.auth import models as auth_models  # noqa: F401
from varco.core import blobs as core_blobs  # noqa: F401
from varco.core import models as core_models  # noqa: F401
from varco.events import models as events_models  # noqa: F401
from varco.invoices import models as invoices_models  # noqa: F401
from varco.core.db import Base

metadata = Base.metadata
