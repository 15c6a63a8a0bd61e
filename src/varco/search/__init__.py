"""Searching sent and received invoices and their notifications (version 1 and version 2 paths)."""
