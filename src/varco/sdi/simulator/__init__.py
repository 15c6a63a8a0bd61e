"""The simulated Exchange System (SDI): varco's default channel. See docs/sdi.md."""
