"""Imports every table so that Base.metadata is complete (Alembic, tests)."""

from varco.accounts import models as accounts_models  # noqa: F401
from varco.auth import models as auth_models  # noqa: F401
from varco.core import models as core_models  # noqa: F401
from varco.core.db import Base

metadata = Base.metadata
