"""§8 limits: per-IP request rates, the hourly leaky bucket per paying account, the annual lock."""
