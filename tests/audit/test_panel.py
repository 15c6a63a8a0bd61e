"""The operator's audit page in the panel: the same events, filters and pages as the API."""

from __future__ import annotations

import re

from tests.audit.support import ADMIN_IP, USER_IP, clients, run_scenario
from tests.factories import make_account
from tests.panel.support import panel_login


def rows(html: str) -> list[str]:
    table = re.search(r'<table id="audit">.*?</table>', html, re.S)
    assert table, "no audit table"
    return re.findall(r"<tr><td>.*?</tr>", table.group(0), re.S)


def test_the_operator_sees_the_events_and_filters_them(app, client, clock):
    user, operator = clients(app)
    done = run_scenario(user, operator, clock)
    admin_page = operator.get("/panel/admin")
    assert 'href="/panel/admin/audit"' in admin_page.text and "Registro di controllo" in admin_page.text

    mine = {"username": done.username, "from": done.start.isoformat()}
    page = operator.get("/panel/admin/audit", params=mine)
    assert page.status_code == 200
    found = rows(page.text)
    assert [re.search(r"<code>(.*?)</code>", r).group(1) for r in found] == [
        "callback.secret.rotated",
        "account.tier.changed",
        "auth.signin.succeeded",
        "auth.signin.failed",
    ]
    assert (
        USER_IP in found[0] and ADMIN_IP in found[1] and done.admin in found[1] and "from=6, to=3" in found[1]
    )
    assert "non autenticato" in found[3] and "reason=wrong_credentials" in found[3]

    first = operator.get("/panel/admin/audit", params={**mine, "size": "3"})
    assert len(rows(first.text)) == 3 and "Pagina 1 di 2" in first.text
    following = re.search(r'<a href="\?page=2([^"]*)">Successiva</a>', first.text)
    assert following, "no link to the next page"
    second = operator.get("/panel/admin/audit?page=2" + following.group(1).replace("&amp;", "&"))
    assert len(rows(second.text)) == 1 and "auth.signin.failed" in second.text

    operator.cookies.set("varco_lang", "en")
    english = operator.get("/panel/admin/audit", params={**mine, "kind": "auth.signin"})
    assert "Audit trail" in english.text and len(rows(english.text)) == 2
    bad = operator.get("/panel/admin/audit", params={"ip": "not-an-address"})
    assert bad.status_code == 400 and 'role="alert"' in bad.text and "ip" in bad.text


def test_the_audit_page_is_for_operators(client):
    panel_login(client, make_account().username)
    assert client.get("/panel/admin/audit").status_code == 403
