"""Synchronous extra-schema rules of §7.3 (reported under 0096): 00313."""
