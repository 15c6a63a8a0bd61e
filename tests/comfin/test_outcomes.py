"""ES01/ES02/ES03 through simulator scenarios, and the simulator's own checks."""

from __future__ import annotations

import base64

import pytest
from lxml import etree

from tests.comfin.support import SUPPLIER_VAT, b64, li_xml, sign
from tests.factories import bearer, make_account, sign_in
from varco.core.clock import current_clock
from varco.core.db import unit_of_work
from varco.sdi.simulator import scenarios


@pytest.fixture
def rules(db):
    yield
    with unit_of_work() as session:
        scenarios.clear(session, "comfin", "")
        scenarios.clear(session, "comfin", "LI")


def set_rule(value: str, outcome: str) -> None:
    with unit_of_work() as session:
        scenarios.set_rule(session, "comfin", value, current_clock(), outcome=outcome)


def run(client, queue, pkcs12, xml: bytes) -> dict:
    token = sign_in(client, make_account(vat_code=SUPPLIER_VAT).username)
    created = client.post(
        "/api/v2/comfin",
        json={"comunicationType": "LI", "dataFile": b64(sign(pkcs12, xml))},
        headers=bearer(token),
    )
    assert created.status_code == 200, created.text
    queue.drain()
    return client.get(f"/api/v2/comfin/{created.json()['requestId']}", headers=bearer(token)).json()


@pytest.mark.parametrize("outcome", ["ES02", "ES03"])
def test_scenario_forces_the_esito(client, queue, pkcs12, rules, outcome):
    set_rule("LI", outcome)
    info = run(client, queue, pkcs12, li_xml())
    assert (info["result"], info["elaboratedResult"], info["pddAvailable"]) == ("SF02", outcome, True)
    esito = etree.fromstring(base64.b64decode(info["notifyResult"]))
    assert esito.findtext("Esito") == outcome
    assert esito.find("ListaErrori/Errore/Codice") is not None


def test_type_rule_beats_the_all_rule(client, queue, pkcs12, rules):
    set_rule("", "ES03")
    set_rule("LI", "ES01")
    assert run(client, queue, pkcs12, li_xml())["elaboratedResult"] == "ES01"


def test_simulator_rejects_a_wrong_check_digit(client, queue, pkcs12, rules):
    # XSD-valid (11 digits) but the VAT number's check digit is wrong: the SDI rejects (ES03).
    info = run(client, queue, pkcs12, li_xml(SUPPLIER_VAT, vat="01234560018"))
    assert info["elaboratedResult"] == "ES03"
    assert b"01234560018" in base64.b64decode(info["notifyResult"])


def test_comfin_rules_accept_only_es_codes(db):
    with unit_of_work() as session, pytest.raises(scenarios.InvalidScenario):
        scenarios.set_rule(session, "comfin", "", current_clock(), outcome="RC")


def test_cli_sets_a_comfin_rule(db, rules):
    from typer.testing import CliRunner

    from varco.cli import app

    result = CliRunner().invoke(app, ["sdi", "scenario", "comfin", "--outcome", "es02", "--target", "LI"])
    assert result.exit_code == 0, result.output
    with unit_of_work() as session:
        assert [
            (r.kind, r.value, r.outcome) for r in scenarios.list_rules(session) if r.kind == "comfin"
        ] == [("comfin", "LI", "ES02")]
    assert CliRunner().invoke(app, ["sdi", "scenario", "comfin", "--outcome", "RC"]).exit_code == 2
