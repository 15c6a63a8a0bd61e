"""`/api/v2/callbacks` (registration, test, deliveries) and `/api/v2/events` (the feed)."""

from __future__ import annotations

import copy
from typing import Annotated, Any

from fastapi import APIRouter, FastAPI, Query, Response

from varco.auth.dependencies import Acting, Caller
from varco.callbacks import feed, service, signing
from varco.callbacks.examples import DELIVERY_DOC, EXAMPLES
from varco.callbacks.schemas import (
    CallbackCreate,
    CallbackList,
    CallbackOut,
    CallbackWithSecret,
    DeliveryList,
    DeliveryOut,
    EventItem,
    EventPage,
    TestQueued,
)
from varco.core.deps import ClockDep, SessionDep, SettingsDep

router = APIRouter(tags=["callbacks and events"])
Q = Annotated[str | None, Query()]
DELIVERIES_MAX = 100


# OpenAPI "callbacks": what varco POSTs to a registered URL, with one example per event type.
receiver = APIRouter()
DELIVERY_EXAMPLES = {kind: {"summary": kind, "value": value} for kind, value in EXAMPLES.items()}
FEED_EXAMPLES = {
    kind: {
        "summary": kind,
        "value": {"events": [value], "nextCursor": value["cursor"] or "0", "hasMore": False},
    }
    for kind, value in EXAMPLES.items()
    if kind != "test"
}


@receiver.post(
    "{$request.body#/url}",
    summary="An event delivered to your endpoint",
    description=DELIVERY_DOC,
    openapi_extra={
        "parameters": [
            {"name": name, "in": "header", "required": True, "schema": {"type": "string"}}
            for name in (signing.SIGNATURE_HEADER, signing.EVENT_ID_HEADER, signing.EVENT_TYPE_HEADER)
        ],
        "requestBody": {"content": {"application/json": {"examples": DELIVERY_EXAMPLES}}},
    },
    responses={200: {"description": "Any 2xx: delivered"}},
)
def delivered_event(body: EventItem) -> None:  # pragma: no cover - documentation only
    """Never called: it documents the request varco sends."""


@router.post(
    "/api/v2/callbacks",
    status_code=201,
    response_model=CallbackWithSecret,
    summary="Register a callback endpoint (the secret is shown once)",
    description=DELIVERY_DOC,
    callbacks=receiver.routes,
)
def register(
    body: CallbackCreate,
    caller: Caller,
    actor: Acting,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
) -> CallbackWithSecret:
    new = service.NewCallback(url=body.url, events=body.events, description=body.description)
    endpoint, secret = service.register(session, caller, new, settings, clock, actor)
    return CallbackWithSecret.with_secret(endpoint, secret)


@router.get("/api/v2/callbacks", response_model=CallbackList, summary="The caller's callback endpoints")
def list_callbacks(caller: Caller, session: SessionDep) -> CallbackList:
    found = [CallbackOut.of(e) for e in service.listing(session, caller)]
    return CallbackList(count=len(found), callbacks=found)


@router.get("/api/v2/callbacks/{callback_id}", response_model=CallbackOut, summary="One callback endpoint")
def get_callback(callback_id: str, caller: Caller, session: SessionDep) -> CallbackOut:
    return CallbackOut.of(service.get_owned(session, caller, service.parse_id(callback_id)))


@router.delete("/api/v2/callbacks/{callback_id}", status_code=204, summary="Delete a callback endpoint")
def delete_callback(
    callback_id: str, caller: Caller, actor: Acting, session: SessionDep, clock: ClockDep
) -> Response:
    service.delete(session, caller, service.parse_id(callback_id), clock, actor)
    return Response(status_code=204)


@router.post(
    "/api/v2/callbacks/{callback_id}/test",
    status_code=202,
    response_model=TestQueued,
    summary="Send a test event (type `test`, one attempt; see the deliveries list for the result)",
)
def test_callback(callback_id: str, caller: Caller, session: SessionDep, clock: ClockDep) -> TestQueued:
    delivery = service.send_test(session, caller, service.parse_id(callback_id), clock)
    return TestQueued(deliveryId=str(delivery.id), eventId=delivery.event_uid, status=delivery.status)


@router.post(
    "/api/v2/callbacks/{callback_id}/enable",
    response_model=CallbackOut,
    summary="Enable a disabled endpoint again (it receives events recorded from now on)",
)
def enable_callback(
    callback_id: str, caller: Caller, actor: Acting, session: SessionDep, clock: ClockDep
) -> CallbackOut:
    return CallbackOut.of(service.enable(session, caller, service.parse_id(callback_id), clock, actor))


@router.post(
    "/api/v2/callbacks/{callback_id}/secret",
    response_model=CallbackWithSecret,
    summary="Replace the signing secret (the new one is shown once)",
)
def rotate_secret(
    callback_id: str,
    caller: Caller,
    actor: Acting,
    session: SessionDep,
    settings: SettingsDep,
    clock: ClockDep,
) -> CallbackWithSecret:
    callback = service.parse_id(callback_id)
    endpoint, secret = service.rotate_secret(session, caller, callback, settings, clock, actor)
    return CallbackWithSecret.with_secret(endpoint, secret)


@router.get(
    "/api/v2/callbacks/{callback_id}/deliveries",
    response_model=DeliveryList,
    summary="Latest deliveries to an endpoint, newest first",
)
def list_deliveries(callback_id: str, caller: Caller, session: SessionDep, limit: Q = None) -> DeliveryList:
    size = feed.parse_limit(limit, 20, DELIVERIES_MAX)
    found = service.deliveries(session, caller, service.parse_id(callback_id), size)
    items = [DeliveryOut.of(d, type_) for d, type_ in found]
    return DeliveryList(count=len(items), deliveries=items)


FEED_DOC = """
The caller's events, and those of the taxpayers that delegated it (ACTIVE), oldest first. Start
without `after`; pass `nextCursor` as `after` to read on. Cursors are stable: the same `after`
always returns the same events, and an event never appears before one with a smaller cursor, so a
client that was down catches up without loss. Each item is exactly the body a callback receives.
"""


@router.get(
    "/api/v2/events",
    response_model=EventPage,
    summary="The event feed (catch up after an outage)",
    description=FEED_DOC,
    responses={200: {"content": {"application/json": {"examples": FEED_EXAMPLES}}}},
)
def event_feed(
    caller: Caller, session: SessionDep, settings: SettingsDep, after: Q = None, limit: Q = None
) -> EventPage:
    page = feed.read(
        session,
        caller,
        feed.parse_cursor(after),
        feed.parse_limit(limit, settings.events_page_default, settings.events_page_max),
    )
    return EventPage(events=page.items, nextCursor=page.next_cursor, hasMore=page.has_more)


def install_openapi_examples(app: FastAPI) -> None:
    """Keep the nulls of the examples in the OpenAPI description.

    FastAPI drops every null from the document it builds (`exclude_none`), examples included, so
    `"cursor": null` or `"notificationType": null` would vanish and the examples would not show
    every field a receiver gets. The examples are put back whole into the built document.
    """
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            paths = build()["paths"]  # cached by FastAPI as app.openapi_schema
            for expression in paths["/api/v2/callbacks"]["post"]["callbacks"]["delivered_event"].values():
                json_body = expression["post"]["requestBody"]["content"]["application/json"]
                json_body["examples"] = copy.deepcopy(DELIVERY_EXAMPLES)
            answer = paths["/api/v2/events"]["get"]["responses"]["200"]["content"]["application/json"]
            answer["examples"] = copy.deepcopy(FEED_EXAMPLES)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
