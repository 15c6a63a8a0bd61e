"""All panel pages under /panel, as one router for the application."""

from __future__ import annotations

from fastapi import APIRouter

from varco.panel import pages_admin, pages_auth, pages_callbacks, pages_config, pages_invoices

router = APIRouter()
for part in (pages_auth, pages_invoices, pages_config, pages_callbacks, pages_admin):
    router.include_router(part.router)
