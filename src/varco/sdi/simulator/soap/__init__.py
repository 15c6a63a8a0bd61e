"""The simulated SDI's SDICoop face: `varco sdi serve-sdicoop` (docs/sdicoop.md)."""
