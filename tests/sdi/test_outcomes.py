"""The full life of a sent invoice in each scenario, driven by the simulator on both databases."""

from __future__ import annotations

from datetime import timedelta

from lxml import etree
from sqlalchemy import select

from tests.sdi.factories import (
    assert_valid_messages,
    invoice,
    invoice_file,
    notifications,
    send_invoice,
    state,
    supplier_account,
    types,
    unique_code,
)
from varco.core.db import unit_of_work
from varco.events.models import Event
from varco.invoices.states import InvoiceState as S
from varco.sdi import messages
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import engine, scenarios
from varco.sdi.simulator.control import set_scenario


def rule(clock, **kwargs) -> None:
    with unit_of_work() as session:
        set_scenario(session, clock, **kwargs)


def advance(clock, duration: str) -> int:
    """What `varco sdi advance` does."""
    with unit_of_work() as session:
        sim_clock.advance(session, sim_clock.parse_duration(duration), clock)
    return engine.run_due(clock)


def sent(fixture: str = "FPR12.xml", **overrides):
    account = supplier_account()
    return sent_by(account, fixture, **overrides)


def sent_by(account, fixture: str = "FPR12.xml", **overrides):
    return send_invoice(account, invoice_file(fixture, supplier_vat=account.vat_code, **overrides))


def test_default_private_invoice_is_delivered(db, clock, queue):
    invoice_ = sent()
    assert state(invoice_.id) == S.INVIATA
    assert invoice_.sdi_id.isdigit() and len(invoice_.sdi_id) <= 12
    queue.drain()
    assert state(invoice_.id) == S.CONSEGNATA
    [(rc, content)] = notifications(invoice_.id)
    assert rc.filename == invoice_.filename.removesuffix(".xml") + "_RC_001.xml"
    parsed = messages.parse(content)
    assert (parsed.type, parsed.sdi_id, parsed.filename) == ("RC", invoice_.sdi_id, invoice_.filename)
    assert rc.notification_date == parsed.delivered_at == clock.now()
    assert invoice(invoice_.id).delivered_at == clock.now()
    assert_valid_messages(invoice_.id)


def test_every_state_change_emits_update_invoice_status(db, clock, queue):
    invoice_ = sent()
    queue.drain()
    with unit_of_work() as session:
        events = session.scalars(
            select(Event).where(Event.subject == invoice_.filename).order_by(Event.id)
        ).all()
    assert [(e.type, e.payload["status"], e.payload["event"]) for e in events] == [
        ("updateInvoiceStatus", 3, "sent"),
        ("updateInvoiceStatus", 7, "RC"),
    ]


def test_simplified_invoice_is_delivered(db, clock, queue):
    invoice_ = sent("FSM10.xml")
    queue.drain()
    assert state(invoice_.id) == S.CONSEGNATA


def test_mc_for_an_unreachable_private_recipient(db, clock, queue):
    code = unique_code()
    rule(clock, recipient_code=code, outcome="MC")
    invoice_ = sent(codice_destinatario=code)
    queue.drain()
    assert state(invoice_.id) == S.NON_CONSEGNATA
    assert types(invoice_.id) == ["MC"]
    assert_valid_messages(invoice_.id)


def test_ns_by_scenario_lists_the_error(db, clock, queue):
    code = unique_code()
    rule(clock, recipient_code=code, outcome="NS")
    invoice_ = sent(codice_destinatario=code)
    queue.drain()
    assert state(invoice_.id) == S.SCARTATA
    [(ns, content)] = notifications(invoice_.id)
    assert ns.type == "NS" and ns.filename.endswith("_NS_001.xml")
    assert [e["code"] for e in messages.parse(content).errors] == ["00311"]
    assert invoice(invoice_.id).sdi_errors[0]["code"] == "00311"
    assert_valid_messages(invoice_.id)


def test_sdi_runs_extra_schema_rules_even_when_the_sender_skipped_them(db, clock, queue):
    account = supplier_account()
    content = invoice_file("00400_line_without_natura.xml", supplier_vat=account.vat_code)
    invoice_ = send_invoice(account, content, skip_extra_schema=True)
    queue.drain()
    assert state(invoice_.id) == S.SCARTATA
    [(_, ns)] = notifications(invoice_.id)
    root = etree.fromstring(ns)
    # The line without Natura also leaves its N4 summary short: the SDI's own 00422 (sdi_controls).
    assert [e.findtext("Codice") for e in root.iterfind("ListaErrori/Errore")] == ["00400", "00422"]
    assert "Natura" in root.findtext("ListaErrori/Errore/Descrizione")
    assert invoice(invoice_.id).sdi_errors == [
        {"code": e.findtext("Codice"), "description": e.findtext("Descrizione")}
        for e in root.iterfind("ListaErrori/Errore")
    ]


def test_pa_default_accepts(db, clock, queue):
    invoice_ = sent("FPA12.xml")
    queue.drain()
    assert state(invoice_.id) == S.ACCETTATA
    assert types(invoice_.id) == ["RC", "NE"]
    ne, content = notifications(invoice_.id)[1]
    assert (ne.result, ne.number) == ("EC01", None)
    assert messages.parse(content).esito == "EC01"
    assert invoice(invoice_.id).outcome_deadline_at == invoice(invoice_.id).delivered_at + timedelta(days=15)
    assert_valid_messages(invoice_.id)


def test_pa_refuses(db, clock, queue):
    code = unique_code()[:6]
    rule(clock, recipient_code=code, outcome="NE-EC02")
    invoice_ = sent("FPA12.xml", codice_destinatario=code)
    queue.drain()
    assert state(invoice_.id) == S.RIFIUTATA
    assert notifications(invoice_.id)[1][0].result == "EC02"
    assert_valid_messages(invoice_.id)


def test_pa_unreachable_is_at(db, clock, queue):
    code = unique_code()[:6]
    rule(clock, recipient_code=code, outcome="AT")
    invoice_ = sent("FPA12.xml", codice_destinatario=code)
    queue.drain()
    assert state(invoice_.id) == S.RECAPITO_IMPOSSIBILE
    assert types(invoice_.id) == ["AT"]
    assert_valid_messages(invoice_.id)


def test_dt_comes_after_15_simulated_days_and_not_before(db, clock, queue):
    code = unique_code()[:6]
    rule(clock, recipient_code=code, outcome="DT")
    invoice_ = sent("FPA12.xml", codice_destinatario=code)
    queue.drain()
    assert state(invoice_.id) == S.CONSEGNATA
    advance(clock, "14d23h59m")
    assert state(invoice_.id) == S.CONSEGNATA
    engine.tick(clock)  # the periodic tick finds nothing due for it either
    queue.drain()
    assert state(invoice_.id) == S.CONSEGNATA
    advance(clock, "1m")
    assert state(invoice_.id) == S.DECORRENZA_TERMINI
    assert types(invoice_.id) == ["RC", "DT"]
    assert_valid_messages(invoice_.id)


def test_dt_deadline_is_picked_up_by_the_periodic_tick(db, clock, queue):
    code = unique_code()[:6]
    rule(clock, recipient_code=code, outcome="DT")
    invoice_ = sent("FPA12.xml", codice_destinatario=code)
    queue.drain()
    clock.advance(timedelta(days=15))  # varco's clock moves: simulated time moves with it
    engine.tick(clock)
    queue.drain()
    assert state(invoice_.id) == S.DECORRENZA_TERMINI


def test_delay_holds_the_outcome_until_simulated_time_passes(db, clock, queue):
    code = unique_code()
    rule(clock, recipient_code=code, outcome="RC", delay="30s")
    invoice_ = sent(codice_destinatario=code)
    queue.drain()
    assert state(invoice_.id) == S.INVIATA
    advance(clock, "29s")
    assert state(invoice_.id) == S.INVIATA
    advance(clock, "1s")
    assert state(invoice_.id) == S.CONSEGNATA
    [(rc, _)] = notifications(invoice_.id)
    assert rc.notification_date == clock.now() + timedelta(seconds=30)  # simulated time of delivery


def test_file_name_rule_beats_recipient_code_rule(db, clock, queue):
    code = unique_code()
    rule(clock, recipient_code=code, outcome="MC")
    account = supplier_account()
    with unit_of_work() as session:  # the next name the pipeline will give this transmitter
        from varco.invoices import filenames
        from varco.settings import get_settings

        upcoming = filenames.peek_filename(session, get_settings().transmitter_id, signed=False)
    rule(clock, filename=upcoming, outcome="NS")
    first = sent_by(account, codice_destinatario=code)
    second = sent_by(account, codice_destinatario=code)
    queue.drain()
    assert first.filename == upcoming
    assert (state(first.id), state(second.id)) == (S.SCARTATA, S.NON_CONSEGNATA)


def test_default_rule_applies_when_nothing_else_matches(db, clock, queue):
    rule(clock, default=True, outcome="MC")
    invoice_ = sent()
    queue.drain()
    assert state(invoice_.id) == S.NON_CONSEGNATA
    with unit_of_work() as session:
        scenarios.clear(session, "default", "")
    later = sent()
    queue.drain()
    assert state(later.id) == S.CONSEGNATA


def test_pa_batch_gets_one_ne_per_invoice(db, clock, queue):
    account = supplier_account()
    root = etree.fromstring(invoice_file("FPA12.xml", supplier_vat=account.vat_code))
    body = root.find("FatturaElettronicaBody")
    twin = etree.fromstring(etree.tostring(body))
    twin.find("DatiGenerali/DatiGeneraliDocumento/Numero").text = "FPA-2026-99"
    root.append(twin)
    invoice_ = send_invoice(account, etree.tostring(root, xml_declaration=True, encoding="UTF-8"))
    queue.drain()
    assert state(invoice_.id) == S.ACCETTATA
    ne = [(n, c) for n, c in notifications(invoice_.id) if n.type == "NE"]
    numbers = [b.number for b in invoice(invoice_.id).bodies]
    assert [n.number for n, _ in ne] == numbers
    assert [n.filename[-10:] for n, _ in ne] == ["NE_001.xml", "NE_002.xml"]
    refs = [messages.parse(c).ref for _, c in ne]
    assert [(r.numero, r.anno, r.posizione) for r in refs] == [(numbers[0], 2026, 1), (numbers[1], 2026, 2)]
    assert_valid_messages(invoice_.id)


def test_private_batch_is_one_file_one_rc(db, clock, queue):
    invoice_ = sent("FPR12_batch.xml")
    queue.drain()
    assert len(invoice(invoice_.id).bodies) == 2
    assert state(invoice_.id) == S.CONSEGNATA
    assert types(invoice_.id) == ["RC"]
