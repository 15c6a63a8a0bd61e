"""varco: a self-hostable Italian e-invoicing intermediary."""

__version__ = "0.1.0"
