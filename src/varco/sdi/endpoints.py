"""Customer outcome on received invoices (decisions.md) and the admin controls of the simulator."""

from __future__ import annotations

from fastapi import APIRouter, Request

from varco import fatturapa
from varco.accounts import service as accounts
from varco.audit import service as audit
from varco.auth.dependencies import Acting, Admin, Caller
from varco.core import idempotency
from varco.core.bodies import carries_file
from varco.core.deps import ClockDep, SessionDep
from varco.core.errors import BadRequest, request_id
from varco.sdi import esito as esito_service
from varco.sdi import received
from varco.sdi.models import UnroutableInvoice
from varco.sdi.schemas import (
    AdvanceIn,
    AdvanceOut,
    EsitoIn,
    EsitoOut,
    EsitoStatus,
    InjectIn,
    InjectOut,
    ScenarioIn,
    ScenarioList,
    ScenarioOut,
    SdiError,
    UnroutableOut,
)
from varco.sdi.simulator import clock as sim_clock
from varco.sdi.simulator import control, scenarios
from varco.sdi.simulator.inject import inject

esito_router = APIRouter(tags=["received invoices"])
admin_router = APIRouter(prefix="/api/v2/admin/sdi", tags=["admin: SDI simulator"])


@esito_router.post(
    "/services/invoice/in/sendEsitoCommittente",
    response_model=EsitoOut,
    summary="Send the customer outcome (EC01 accept / EC02 refuse) on a received invoice",
    openapi_extra={"parameters": [idempotency.OPENAPI_PARAMETER]},
    responses={409: {"description": "Idempotency-Key reused for another request (errorCode 0409)"}},
)
def send_esito_committente(
    request: Request, body: EsitoIn, caller: Caller, session: SessionDep, clock: ClockDep
) -> EsitoOut:
    missing = [name for name in ("filename", "sdiId", "esito") if not getattr(body, name)]
    if missing:
        raise esito_service.EsitoInputError(f"missing required field(s): {', '.join(missing)}")
    assert body.filename and body.sdiId and body.esito
    key = idempotency.key_of(request)
    body_sha256 = idempotency.digest(body.model_dump_json()) if key else ""
    if key and (
        first := idempotency.replay(session, caller.id, "esito", key, body_sha256, clock)
        or idempotency.claim(session, caller.id, "esito", key, body_sha256, clock)
    ):
        return EsitoOut.model_validate(first)
    row = esito_service.send_esito(
        session,
        caller,
        esito_service.EsitoRequest(
            filename=body.filename,
            sdi_id=body.sdiId,
            esito=body.esito.upper(),
            numero=body.numero,
            anno=body.anno,
            posizione=body.posizione,
            descrizione=body.descrizione,
            message_id=body.messageId,
        ),
        clock,
    )
    result = EsitoOut(
        errorCode="0000",
        errorDescription=f"Operation done [request {request_id(request)}]",
        esitoFileName=row.esito_filename,
    )
    if key:
        idempotency.answered(session, caller.id, "esito", key, result.model_dump())
    return result


@esito_router.get(
    "/services/invoice/in/sendEsitoCommittente/{filename}",
    response_model=EsitoStatus,
    summary="The customer outcome sent on a received invoice, with its status",
)
def get_esito_committente(filename: str, caller: Caller, session: SessionDep) -> EsitoStatus:
    row = esito_service.get_esito(session, caller, filename)
    return EsitoStatus(
        filename=row.filename,
        sdiId=row.sdi_id,
        esito=row.esito,
        numero=row.numero,
        anno=row.anno,
        posizione=row.posizione,
        descrizione=row.descrizione,
        messageId=row.message_id,
        esitoFileName=row.esito_filename,
        status=row.status,
    )


def _rule_out(rule: scenarios.Rule) -> ScenarioOut:
    return ScenarioOut(
        kind=rule.kind,
        value=rule.value,
        outcome=rule.outcome,
        esitoOutcome=rule.esito_outcome,
        delay=sim_clock.format_duration(rule.delay),
    )


@admin_router.post("/scenarios", response_model=ScenarioOut, summary="Set a scenario rule")
def set_scenario(
    body: ScenarioIn, admin: Admin, actor: Acting, session: SessionDep, clock: ClockDep
) -> ScenarioOut:
    rule = control.set_scenario(
        session,
        clock,
        recipient_code=body.recipientCode,
        filename=body.filename,
        default=body.default,
        outcome=body.outcome,
        esito_outcome=body.esitoOutcome,
        delay=body.delay,
    )
    audit.record(session, audit.Kind.SDI_SCENARIO_SET, actor, clock, details=control.rule_details(rule))
    return _rule_out(rule)


@admin_router.get("/scenarios", response_model=ScenarioList, summary="Scenario rules and simulated time")
def list_scenarios(admin: Admin, session: SessionDep, clock: ClockDep) -> ScenarioList:
    state = control.clock_state(session, clock)
    return ScenarioList(
        simulatedNow=state.simulated_now.isoformat(),
        offset=sim_clock.format_duration(state.offset),
        rules=[_rule_out(r) for r in scenarios.list_rules(session)],
    )


@admin_router.delete("/scenarios", summary="Delete one rule (by recipientCode or filename) or all")
def clear_scenarios(
    admin: Admin,
    actor: Acting,
    session: SessionDep,
    clock: ClockDep,
    recipientCode: str | None = None,  # contract-style query names
    filename: str | None = None,
    default: bool = False,
) -> dict[str, int]:
    deleted = control.clear_scenarios(
        session, recipient_code=recipientCode, filename=filename, default=default
    )
    details = control.cleared_details(recipientCode, filename, default, deleted)
    audit.record(session, audit.Kind.SDI_SCENARIO_DELETED, actor, clock, details=details)
    return {"deleted": deleted}


@admin_router.post("/advance", response_model=AdvanceOut, summary="Move the simulated clock forward")
def advance(body: AdvanceIn, admin: Admin, actor: Acting, session: SessionDep, clock: ClockDep) -> AdvanceOut:
    state, due = control.advance(session, body.duration, clock)
    details = {"duration": body.duration, "to": state.simulated_now.isoformat()}
    audit.record(session, audit.Kind.SDI_CLOCK_ADVANCED, actor, clock, details=details)
    return AdvanceOut(
        simulatedNow=state.simulated_now.isoformat(), offset=sim_clock.format_duration(state.offset), due=due
    )


@admin_router.post(
    "/inject",
    response_model=InjectOut,
    summary="Deliver an invoice from an outside sender",
)
@carries_file
def inject_invoice(
    body: InjectIn, admin: Admin, actor: Acting, session: SessionDep, clock: ClockDep
) -> InjectOut:
    try:
        content = fatturapa.decode_base64(body.file)
    except fatturapa.FatturaPAError as exc:
        raise BadRequest(f"file: {exc.finding.message}") from None
    result = inject(session, content, clock, body.filename)
    delivery = result.delivery
    out = InjectOut(
        sdiId=result.sdi_id,
        filename=result.filename,
        status="DISCARDED",
        errors=[SdiError(code=e["code"], description=e["description"]) for e in result.errors],
    )
    if delivery is not None and delivery.invoice is not None:
        owner = accounts.get(session, delivery.invoice.account_id)
        out.status, out.invoiceId = "DELIVERED", delivery.invoice.id
        out.username = owner.username if owner else None
    elif delivery is not None and delivery.unroutable is not None:
        out.status, out.unroutableId = "UNROUTABLE", delivery.unroutable.id
    details = {"filename": out.filename, "sdiId": out.sdiId, "result": out.status}
    audit.record(session, audit.Kind.SDI_INVOICE_INJECTED, actor, clock, details=details)
    return out


def _unroutable_out(row: UnroutableInvoice) -> UnroutableOut:
    return UnroutableOut(
        id=row.id,
        sdiId=row.sdi_id,
        filename=row.filename,
        reason=row.reason,
        receivedAt=row.received_at.isoformat(),
        invoiceId=row.invoice_id,
    )


@admin_router.get("/unroutable", response_model=list[UnroutableOut], summary="Received invoices kept aside")
def list_unroutable(admin: Admin, session: SessionDep) -> list[UnroutableOut]:
    return [_unroutable_out(r) for r in received.list_unroutable(session)]


@admin_router.post("/redeliver", response_model=list[UnroutableOut], summary="Deliver kept-aside invoices")
def redeliver(admin: Admin, actor: Acting, session: SessionDep, clock: ClockDep) -> list[UnroutableOut]:
    delivered = received.redeliver(session, clock)
    audit.record(session, audit.Kind.SDI_REDELIVERED, actor, clock, details={"delivered": len(delivered)})
    return [_unroutable_out(row) for row, _ in delivered]
