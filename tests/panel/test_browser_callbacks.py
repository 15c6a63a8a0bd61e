"""Callbacks in a real browser (Playwright + Debian chromium): create an endpoint, see its secret once."""

from __future__ import annotations

import re

from tests.callbacks.receiver import Receiver
from tests.factories import make_account
from tests.panel.support import browser_sign_in


def test_create_an_endpoint_and_see_its_secret_once(browser_page, shoot, clock):
    account = make_account(vat_code="01234560017")
    receiver = Receiver(clock)
    try:
        page = browser_page
        browser_sign_in(page, account.username)
        page.get_by_role("link", name="Callback", exact=True).click()
        page.get_by_role("heading", name="Callback", exact=True).wait_for()
        page.get_by_label("URL", exact=True).fill(receiver.url)
        events = page.get_by_role("group", name="Eventi")
        events.get_by_role("checkbox", name=re.compile("^updateInvoiceStatus")).check()
        events.get_by_role("checkbox", name=re.compile("^createInvoice")).check()
        page.get_by_label("Descrizione").fill("Gestionale di prova")
        page.get_by_role("button", name="Crea endpoint").click()

        page.get_by_role("heading", name="Segreto di firma").wait_for()
        secret = page.get_by_label(re.compile("^Segreto dell'endpoint")).input_value()
        assert secret.startswith("vcs_")
        assert "non verrà più mostrato" in page.locator("#secret").inner_text()
        shoot(page, "callbacks")

        page.get_by_role("link", name="Torna ai callback").click()
        row = page.locator("#callbacks tbody tr", has_text=receiver.url)
        assert "createInvoice, updateInvoiceStatus" in row.inner_text() and "Attivo" in row.inner_text()
        assert secret not in page.content()
        row.get_by_role("link").click()
        page.get_by_role("button", name="Invia evento di prova").click()
        assert "in coda" in page.locator("#test-result").inner_text()
    finally:
        receiver.close()
