"""Preservation packages (PDD) of sent and received invoices."""
