"""The panel in a real browser (Playwright + Debian chromium); screenshots: tests/panel/conftest.py."""

from __future__ import annotations

from tests.factories import make_account, make_basic
from tests.invoices.support import invoice_xml
from tests.panel.support import NEW_PASSWORD, PASSWORD, browser_complete_registration, browser_sign_in
from tests.search.factories import received


def test_sign_in_registration_and_logout(browser_page, shoot):
    account = make_account(vat_code="01234560017")
    page = browser_page
    page.goto("/panel/login")
    shoot(page, "login")
    page.get_by_label("Nome utente").fill(account.username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Accedi").click()
    page.wait_for_url("**/panel/register")
    shoot(page, "register")
    browser_complete_registration(page)
    page.wait_for_url("**/panel/invoices/out")
    assert page.get_by_role("heading", name="Fatture inviate").is_visible()
    page.get_by_role("button", name="Esci").click()
    page.wait_for_url("**/panel/login")
    browser_sign_in(page, account.username, NEW_PASSWORD, register=False)


def test_upload_dry_run_then_send_list_and_detail(browser_page, shoot):
    account = make_account(vat_code="01234560017")
    page = browser_page
    browser_sign_in(page, account.username)
    page.get_by_role("link", name="Carica").click()
    xml = invoice_xml(number="PW-1")
    page.get_by_label("Trascina qui un file fattura o sceglilo").set_input_files(
        files=[{"name": "fattura.xml", "mimeType": "text/xml", "buffer": xml}]
    )
    page.get_by_role("button", name="Solo verifica (prova)").click()
    page.locator("#report").wait_for()
    assert "verrebbe chiamato" in page.locator("#report").inner_text()
    shoot(page, "upload-dry-run")
    page.get_by_label("Trascina qui un file fattura o sceglilo").set_input_files(
        files=[{"name": "fattura.xml", "mimeType": "text/xml", "buffer": xml}]
    )
    page.get_by_role("button", name="Invia allo SDI").click()
    page.get_by_text("registrato come").wait_for()
    page.get_by_role("link", name="Fatture inviate").click()
    row = page.locator("#invoices tbody tr").first
    assert "PW-1" in row.inner_text() and "Presa in carico" in row.inner_text()
    shoot(page, "invoices-sent")
    row.get_by_role("link").click()
    page.get_by_role("heading", name="Storico degli stati").wait_for()
    assert "PW-1" in page.content() and "Riepilogo IVA" in page.content()
    shoot(page, "invoice-detail")


def test_outcome_on_a_received_invoice(browser_page, shoot, queue):
    account = make_account(vat_code="09876540015")
    got = received(account, sdi_id="7700001")
    page = browser_page
    browser_sign_in(page, account.username)
    page.get_by_role("link", name="Fatture ricevute").click()
    page.get_by_role("link", name=got.filename).click()
    page.get_by_label("Rifiuta (EC02)").check()
    page.get_by_label("Motivo (obbligatorio per rifiutare)").fill("Importo errato")
    shoot(page, "invoice-received-outcome")
    page.get_by_role("button", name="Invia esito").click()
    page.locator("#outcome").wait_for()
    assert "EC02" in page.locator("#outcome").inner_text()


def test_mandate_request_and_approval(chromium_browser, live_server, shoot):
    premium = make_account(vat_code="05555550028")
    basic = make_basic(vat_code="07111110032")
    asker = chromium_browser.new_context(base_url=live_server, locale="it-IT").new_page()
    browser_sign_in(asker, basic.username)
    asker.get_by_role("link", name="Deleghe").click()
    asker.get_by_label("Nome utente Premium").fill(premium.username)
    asker.get_by_role("button", name="Richiedi").click()
    assert "In attesa di approvazione" in asker.locator("#given").inner_text()
    approver = chromium_browser.new_context(base_url=live_server, locale="it-IT").new_page()
    browser_sign_in(approver, premium.username)
    approver.get_by_role("link", name="Deleghe").click()
    row = approver.locator("#assignors tbody tr", has_text=basic.username)
    assert "In attesa di approvazione" in row.inner_text()
    row.get_by_role("button", name="Approva").click()
    assert "Attivo" in approver.locator("#assignors tbody tr", has_text=basic.username).inner_text()
    shoot(approver, "delegations")
    asker.reload()
    assert "Attivo" in asker.locator("#given").inner_text()
    asker.context.close()
    approver.context.close()


def test_admin_changes_a_scenario(browser_page, shoot):
    admin = make_account(is_admin=True)
    page = browser_page
    browser_sign_in(page, admin.username)
    page.get_by_role("link", name="Amministrazione").click()
    page.get_by_label("Codice destinatario").fill("PWTEST1")
    page.get_by_label("Esito", exact=True).first.select_option("NS")
    page.get_by_role("button", name="Imposta scenario").click()
    row = page.locator("#scenarios tbody tr", has_text="PWTEST1")
    assert "NS" in row.inner_text()
    shoot(page, "admin")


def test_reading_works_with_javascript_off(chromium_browser, live_server):
    account = make_account(vat_code="09876540015")
    got = received(account, sdi_id="7700002")
    context = chromium_browser.new_context(base_url=live_server, locale="it-IT", java_script_enabled=False)
    page = context.new_page()
    browser_sign_in(page, account.username)  # plain forms: sign-in and registration
    page.get_by_role("link", name="Fatture ricevute").click()
    page.get_by_role("link", name=got.filename).click()
    page.get_by_role("heading", name="Storico degli stati").wait_for()
    assert "Riepilogo IVA" in page.content() and "7700002" in page.locator("dl").first.inner_text()
    for name in ("Impostazioni", "Deleghe", "Consumi", "Sessioni e token", "Callback"):
        page.get_by_role("link", name=name, exact=True).click()
        page.get_by_role("heading", name=name, exact=True).wait_for()  # the click does not wait for the page
    page.get_by_role("link", name="EN", exact=True).click()  # back to the same page, in English
    page.get_by_role("heading", name="Callbacks", exact=True).wait_for()
    page.get_by_role("link", name="Received invoices").click()
    page.get_by_role("link", name=got.filename).wait_for()
    context.close()
