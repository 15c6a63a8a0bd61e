"""Callbacks (signed HTTP deliveries of account events) and the event feed (issue 12)."""
