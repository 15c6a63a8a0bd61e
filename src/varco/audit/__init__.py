"""The audit trail: an append-only record of security and administrative events (docs/operations.md)."""
