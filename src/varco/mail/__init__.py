"""Official e-mail (§8.4): an outbox table written in the caller's transaction, delivered by a job."""
