"""Callback endpoints in the panel: list, create (secret shown once), test, enable, new secret, delete,
deliveries.

Every action calls the same `callbacks.service` functions as `/api/v2/callbacks`, so rules, messages
and the caller's scoping (another account's id is unknown: 404) are the API's.
"""

from __future__ import annotations

from urllib.parse import quote_plus

from fastapi import APIRouter, Form, Request
from fastapi.responses import Response

from varco.audit import service as audit
from varco.callbacks import service as callbacks
from varco.callbacks.models import CallbackDelivery, CallbackEndpoint
from varco.callbacks.states import DeliveryStatus
from varco.core.deps import ClockDep, SessionDep, SettingsDep
from varco.core.errors import BadRequest
from varco.panel import sessions
from varco.panel.web import PanelUser, check_csrf, page, redirect

router = APIRouter(prefix="/panel/callbacks", include_in_schema=False)
DELIVERIES_SHOWN = 20
BASE = "/panel/callbacks"

# What each event kind means, in the panel's words (English keys of i18n.py).
KIND_TEXT = {
    "createInvoice": "a received invoice arrived",
    "updateInvoiceStatus": "a sent invoice changed state",
    "updateUsage": "the transmissions counter changed",
    "callbackDisabled": "one of your endpoints was disabled",
}


def _list(
    request: Request,
    current: sessions.Current,
    session: SessionDep,
    settings: SettingsDep,
    *,
    status: int = 200,
    error: str | None = None,
    form: dict[str, object] | None = None,
) -> Response:
    endpoints = callbacks.listing(session, current.account)
    return page(
        request,
        "callbacks.html",
        current,
        status=status,
        endpoints=endpoints,
        last=callbacks.last_deliveries(session, current.account, endpoints),
        kinds=callbacks.EVENT_KINDS,
        kind_text=KIND_TEXT,
        production=settings.profile == "production",
        error=error,
        form=form or {"url": "", "events": [], "description": ""},
        deleted=request.query_params.get("deleted"),
    )


@router.get("")
def callbacks_page(
    request: Request, current: PanelUser, session: SessionDep, settings: SettingsDep
) -> Response:
    return _list(request, current, session, settings)


@router.post("")
def create_callback(
    request: Request,
    current: PanelUser,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
    url: str = Form(""),
    events: list[str] = Form([]),
    description: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    new = callbacks.NewCallback(url=url, events=events, description=description)
    try:
        actor = audit.actor_of(request, current.account)
        endpoint, secret = callbacks.register(session, current.account, new, settings, clock, actor)
    except BadRequest as exc:  # the API's 400 message, shown in the form
        form = {"url": url, "events": events, "description": description}
        return _list(request, current, session, settings, status=400, error=str(exc), form=form)
    # The secret is in this answer only (not in a URL, not stored in clear): never cached.
    response = page(request, "callback_created.html", current, status=201, endpoint=endpoint, secret=secret)
    response.headers["Cache-Control"] = "no-store"
    return response


def _owned(session: SessionDep, current: sessions.Current, callback_id: str) -> CallbackEndpoint:
    return callbacks.get_owned(session, current.account, callbacks.parse_id(callback_id))


def _tested(raw: str | None, rows: list[tuple[CallbackDelivery, str | None]]) -> CallbackDelivery | None:
    """The test delivery a "send test event" press created, if it is among the rows shown."""
    return next((d for d, _ in rows if raw and str(d.id) == raw and d.is_test), None)


def _deliveries_context(
    session: SessionDep, current: sessions.Current, endpoint: CallbackEndpoint, tested: str | None
) -> dict[str, object]:
    rows = callbacks.deliveries(session, current.account, endpoint.id, DELIVERIES_SHOWN)
    return {
        "endpoint": endpoint,
        "deliveries": rows,
        "tested": _tested(tested, rows),
        "polling": any(d.status == DeliveryStatus.PENDING for d, _ in rows),
    }


@router.get("/{callback_id}")
def callback_page(request: Request, callback_id: str, current: PanelUser, session: SessionDep) -> Response:
    endpoint = _owned(session, current, callback_id)
    return page(
        request,
        "callback.html",
        current,
        **_deliveries_context(session, current, endpoint, request.query_params.get("tested")),
        kind_text=KIND_TEXT,
        enabled=request.query_params.get("enabled"),
        error=request.query_params.get("error"),
    )


@router.get("/{callback_id}/deliveries")
def deliveries_fragment(
    request: Request, callback_id: str, current: PanelUser, session: SessionDep
) -> Response:
    """The deliveries section alone: htmx polls it while a delivery is pending."""
    endpoint = _owned(session, current, callback_id)
    context = _deliveries_context(session, current, endpoint, request.query_params.get("tested"))
    return page(request, "callback_deliveries.html", current, **context)


@router.post("/{callback_id}/test")
def send_test(
    callback_id: str, current: PanelUser, session: SessionDep, clock: ClockDep, csrf_token: str = Form("")
) -> Response:
    check_csrf(current, csrf_token)
    delivery = callbacks.send_test(session, current.account, callbacks.parse_id(callback_id), clock)
    return redirect(f"{BASE}/{delivery.callback_id}?tested={delivery.id}#deliveries")


@router.post("/{callback_id}/enable")
def enable(
    request: Request,
    callback_id: str,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    endpoint_id, actor = callbacks.parse_id(callback_id), audit.actor_of(request, current.account)
    try:
        callbacks.enable(session, current.account, endpoint_id, clock, actor)
    except BadRequest as exc:  # a move the state table refuses
        return redirect(f"{BASE}/{endpoint_id}?error={quote_plus(str(exc)[:300])}")
    return redirect(f"{BASE}/{endpoint_id}?enabled=1")


@router.get("/{callback_id}/secret")
def confirm_rotate(request: Request, callback_id: str, current: PanelUser, session: SessionDep) -> Response:
    """Replacing the secret asks first: the receiver must be given the new one at once."""
    return page(request, "callback_secret.html", current, endpoint=_owned(session, current, callback_id))


@router.post("/{callback_id}/secret")
def rotate_secret(
    request: Request,
    callback_id: str,
    current: PanelUser,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    actor = audit.actor_of(request, current.account)
    endpoint, secret = callbacks.rotate_secret(
        session, current.account, callbacks.parse_id(callback_id), settings, clock, actor
    )
    # As at creation: the new secret is in this answer only, never cached.
    response = page(request, "callback_created.html", current, endpoint=endpoint, secret=secret, rotated=True)
    response.headers["Cache-Control"] = "no-store"
    return response


@router.get("/{callback_id}/delete")
def confirm_delete(request: Request, callback_id: str, current: PanelUser, session: SessionDep) -> Response:
    """Deleting asks first, on its own page (no JavaScript confirm needed)."""
    return page(request, "callback_delete.html", current, endpoint=_owned(session, current, callback_id))


@router.post("/{callback_id}/delete")
def delete(
    request: Request,
    callback_id: str,
    current: PanelUser,
    session: SessionDep,
    clock: ClockDep,
    csrf_token: str = Form(""),
) -> Response:
    check_csrf(current, csrf_token)
    actor = audit.actor_of(request, current.account)
    callbacks.delete(session, current.account, callbacks.parse_id(callback_id), clock, actor)
    return redirect(f"{BASE}?deleted=1")
