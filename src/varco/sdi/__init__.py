"""varco's side of the Exchange System (SDI): the channel, inbound messages, customer outcomes."""
