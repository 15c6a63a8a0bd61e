"""Asynchronous extra-schema rules of §7.3 (reported under FATRSM212). Import each module here."""
