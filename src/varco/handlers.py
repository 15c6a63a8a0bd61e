"""Imports every module that registers background job handlers or reconcilers (workers need them all)."""

from varco.invoices import processing  # noqa: F401
