"""Keyboard-only use of the panel (Playwright + Debian chromium): sign in, list, detail.

Every element reached with Tab must show where the focus is, the skip link must lead to the main
content, and every form control of the pages visited must have a label (an accessible name).
"""

from __future__ import annotations

from tests.factories import make_account
from tests.panel.support import NEW_PASSWORD, PASSWORD, browser_sign_in
from tests.search.factories import received

MAX_TABS = 60  # more stops than any page has: a missing target fails instead of looping

FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const box = el.getBoundingClientRect();
  return {
    tag: el.tagName.toLowerCase(),
    id: el.id,
    name: el.getAttribute('name'),
    type: el.getAttribute('type'),
    text: (el.innerText || el.value || '').trim().slice(0, 80),
    href: el.getAttribute('href'),
    outline: style.outlineStyle,
    outlineWidth: parseFloat(style.outlineWidth) || 0,
    shadow: style.boxShadow,
    onScreen: box.width > 0 && box.height > 0 && box.right > 0 && box.bottom > 0
      && box.left < innerWidth && box.top < innerHeight,
  };
}"""

UNLABELLED = """() => [...document.querySelectorAll('input, select, textarea, button')]
  .filter(el => el.type !== 'hidden')
  .filter(el => {
    if (el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')) return false;
    if (el.tagName === 'BUTTON') return !el.innerText.trim();
    return !(el.labels && [...el.labels].some(label => label.innerText.trim()));
  })
  .map(el => el.outerHTML)"""


def focused(page) -> dict:
    info = page.evaluate(FOCUSED)
    assert info is not None, "Tab left the focus on the page body"
    return info


def assert_focus_visible(info: dict) -> None:
    assert info["onScreen"], f"focused element is off screen: {info}"
    ringed = info["outline"] != "none" and info["outlineWidth"] > 0
    assert ringed or info["shadow"] != "none", f"no visible focus indicator: {info}"


def tab_to(page, matches, *, backwards: bool = False) -> dict:
    """Press Tab until the focused element matches, checking each stop on the way shows its focus."""
    for _ in range(MAX_TABS):
        page.keyboard.press("Shift+Tab" if backwards else "Tab")
        info = focused(page)
        assert_focus_visible(info)
        if matches(info):
            return info
    raise AssertionError(f"no focusable element matched within {MAX_TABS} Tab presses on {page.url}")


def assert_controls_labelled(page) -> None:
    assert page.evaluate(UNLABELLED) == [], f"controls without a label on {page.url}"


def test_sign_in_list_and_detail_with_the_keyboard_only(browser_page, shoot):
    account = make_account(vat_code="09876540015")
    got = received(account, sdi_id="7700002")
    page = browser_page
    page.goto("/panel/login")

    # the first Tab stop is the skip link, visible when focused; it leads into the main content
    skip = tab_to(page, lambda f: True)
    assert skip["href"] == "#content" and skip["text"] == "Vai al contenuto"
    shoot(page, "keyboard-skip-link")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "content"  # focus moved, not only scrolled
    assert tab_to(page, lambda f: True)["id"] == "username"  # the next stop is the form, not the header
    assert_controls_labelled(page)
    assert page.get_by_role("group", name="Lingua").get_by_role("link").count() == 2  # a named group

    page.keyboard.type(account.username)
    tab_to(page, lambda f: f["id"] == "password")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url("**/panel/register")

    assert_controls_labelled(page)
    tab_to(page, lambda f: f["name"] == "accept")
    page.keyboard.press("Space")
    assert page.locator("input[name=accept]").is_checked()
    tab_to(page, lambda f: f["id"] == "email")
    page.keyboard.type("ref@pec.example.it")
    tab_to(page, lambda f: f["id"] == "password")
    page.keyboard.type(NEW_PASSWORD)
    tab_to(page, lambda f: f["id"] == "repeated")
    page.keyboard.type(NEW_PASSWORD)
    tab_to(page, lambda f: f["tag"] == "button" and f["text"] == "Salva")
    page.keyboard.press("Enter")
    page.wait_for_url("**/panel/invoices/out")

    assert_controls_labelled(page)
    tab_to(page, lambda f: f["href"] == "/panel/invoices/in")
    page.keyboard.press("Enter")
    page.wait_for_url("**/panel/invoices/in")
    assert_controls_labelled(page)
    row_link = tab_to(page, lambda f: f["text"] == got.filename)
    assert row_link["href"] == f"/panel/invoices/in/{got.id}"
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/panel/invoices/in/{got.id}")
    assert page.get_by_role("heading", name=got.filename).is_visible()
    assert_controls_labelled(page)

    # the outcome form on the detail page is reachable and usable from the keyboard too
    tab_to(page, lambda f: f["name"] == "esito")
    page.keyboard.press("ArrowDown")  # radio group: arrows move the choice
    assert page.locator("input[value=EC02]").is_checked()
    tab_to(page, lambda f: f["id"] == "descrizione")
    shoot(page, "keyboard-invoice-detail")


def test_every_page_labels_its_controls(browser_page):
    admin = make_account(is_admin=True)
    page = browser_page
    browser_sign_in(page, admin.username)
    for path in ("upload", "settings", "delegations", "usage", "tokens", "admin"):
        page.goto(f"/panel/{path}")
        assert_controls_labelled(page)
        tab_to(page, lambda f: f["tag"] in ("input", "select", "button") and f["name"] != "csrf_token")
