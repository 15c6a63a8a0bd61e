"""Version-1 interface (§9): thin adapters over the version-2 services, nothing of their own."""
