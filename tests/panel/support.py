"""Panel test helpers: sign in through the login form, complete registration, read CSRF tokens."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

PASSWORD = "s3cret-pw"
NEW_PASSWORD = "a-longer-s3cret"


def csrf_of(html: str) -> str:
    found = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert found, "no CSRF token in the page"
    return found.group(1)


def panel_login(client: TestClient, username: str, password: str = PASSWORD, register: bool = True):
    form = client.get("/panel/login")
    response = client.post(
        "/panel/login",
        data={"username": username, "password": password, "csrf_token": csrf_of(form.text)},
        follow_redirects=True,
    )
    if register and response.url.path == "/panel/register":
        response = client.post(
            "/panel/register",
            data={
                "csrf_token": csrf_of(response.text),
                "accept": "yes",
                "email": "ref@pec.example.it",
                "password": NEW_PASSWORD,
                "repeated": NEW_PASSWORD,
            },
            follow_redirects=True,
        )
    return response


def browser_sign_in(page, username: str, password: str = PASSWORD, register: bool = True) -> None:
    """Sign in through the login form in a Playwright page (the first time, with registration)."""
    page.goto("/panel/login")
    page.get_by_label("Nome utente").fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Accedi").click()
    if register:
        page.wait_for_url("**/panel/register")
        browser_complete_registration(page)
    page.wait_for_url("**/panel/invoices/out")


def browser_complete_registration(page) -> None:
    page.get_by_label("Accetto le condizioni del servizio").check()
    page.get_by_label("E-mail o PEC di riferimento").fill("ref@pec.example.it")
    page.get_by_label("Password (nuova, oppure quella attuale)", exact=True).fill(NEW_PASSWORD)
    page.get_by_label("Ripeti la nuova password").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Salva").click()
