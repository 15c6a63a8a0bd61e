"""Multisellers (assignors) of a Premium user: list, detail and report (§2.4–2.6, §4.1)."""
