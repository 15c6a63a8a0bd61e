"""The SDICoop face as a web application and a process: `varco sdi serve-sdicoop`.

It serves the SDI's endpoints as the accreditation documents name them (`/ricevi_file`,
`/ricevi_notifica`, `/dati-fattura`) over HTTPS that requires a client certificate of the
configured CA, and runs the simulator's jobs (checks, outcomes, deliveries) in its own threads,
on its own database and job queue (`VARCO_DATA_DIR`): it shares nothing with the varco instances
it serves but the network.
"""

from __future__ import annotations

import logging
import ssl

import uvicorn
from fastapi import FastAPI, Request, Response
from starlette.concurrency import run_in_threadpool

from varco.core import jobs
from varco.core.clock import Clock, current_clock
from varco.core.db import unit_of_work
from varco.sdi.sdicoop import server
from varco.sdi.sdicoop.contracts import Service
from varco.sdi.simulator import network
from varco.sdi.simulator import tasks as simulator_tasks
from varco.sdi.simulator.soap import deliveries, services
from varco.sdi.simulator.soap.config import SimConfig
from varco.settings import get_settings

log = logging.getLogger("varco.sdi.simulator.soap")

PATHS = {
    "ricevi_file": Service.SDI_RICEVI_FILE,
    "ricevi_notifica": Service.SDI_RICEVI_NOTIFICA,
    "dati-fattura": Service.SDI_TRASMISSIONE_FILE,
}
QUEUE_NAME = "varco-sdi-simulator"  # never varco's own queue, even on a shared Redis


def _send(reply: server.SoapReply) -> Response:
    headers = dict(reply.headers)
    if reply.content_type:
        headers["Content-Type"] = reply.content_type
    return Response(reply.body, status_code=reply.status, headers=headers)


def _unknown(path: str) -> Response:
    return Response(
        f"no SDI service at /{path}: {', '.join(PATHS)}\n", status_code=404, media_type="text/plain"
    )


async def _bounded_body(request: Request, limit: int) -> bytes | None:
    """The body, or None past `limit` bytes (read no further)."""
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def create_sdi_app(config: SimConfig) -> FastAPI:
    app = FastAPI(title="varco simulated SDI (SDICoop)", openapi_url=None, docs_url=None, redoc_url=None)
    limit = get_settings().file_body_bytes

    @app.get("/{path}")
    def describe(request: Request, path: str) -> Response:
        if path.endswith(".xsd"):
            try:
                return Response(server.schema_document(path), media_type="text/xml")
            except FileNotFoundError:
                return _unknown(path)
        if path not in PATHS:
            return _unknown(path)
        return _send(server.get_reply(PATHS[path], request.url.query, str(request.url.replace(query=""))))

    @app.post("/{path}")
    async def call(request: Request, path: str) -> Response:
        if path not in PATHS:
            return _unknown(path)
        body = await _bounded_body(request, limit)
        if body is None:
            close = (("Connection", "close"),)  # the rest is not read
            return _send(server.SoapReply(413, server.TEXT_CONTENT_TYPE, b"request too large\n", close))
        try:
            soap = server.parse_request(
                PATHS[path],
                request.headers.get("content-type"),
                body,
                soap_action=request.headers.get("soapaction"),
                max_body_bytes=limit,
            )
        except server.SoapRequestRefused as refused:
            return _send(refused.reply)
        try:
            return _send(await run_in_threadpool(_handle, config, soap, current_clock()))
        except Exception:  # noqa: BLE001 - nothing was kept: the caller may send it again
            log.exception("simulated SDI: %s failed", soap.name)
            return _send(server.server_fault("the simulated SDI could not take it now: send it again"))

    return app


def _handle(config: SimConfig, soap: server.InboundCall, clock: Clock) -> server.SoapReply:
    with unit_of_work() as session:
        return services.HANDLERS[soap.name](session, config, soap.payload, clock)


def install(config: SimConfig) -> jobs.JobQueue:
    """Make this process the SDICoop face: its network, its jobs, its queue."""
    network.use(deliveries.SoapNetwork(config))
    registry = jobs.Registry()
    simulator_tasks.register(registry)
    deliveries.register(registry)
    jobs.use_registry(registry)
    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    queue = jobs.JobQueue(jobs.build_huey(settings.redis_url, str(settings.data_dir), name=QUEUE_NAME))
    jobs.set_queue(queue)
    return queue


def uvicorn_config(app: FastAPI, config: SimConfig, host: str, port: int) -> uvicorn.Config:
    """HTTPS that ends in the handshake without a client certificate of the configured CA."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="info",
        log_config=None,  # one log format per process (core/logs.py); its access log kept, scrubbed
        proxy_headers=False,
        ssl_certfile=str(config.server.certificate),
        ssl_keyfile=str(config.server.key),
        ssl_ca_certs=str(config.server.client_ca),
        ssl_cert_reqs=ssl.CERT_REQUIRED,
    )


def serve(config: SimConfig, host: str, port: int, workers: int = 2) -> None:
    """Run until stopped: the endpoints over mutual TLS, and the simulator's workers."""
    from varco.core.worker import EmbeddedWorker

    queue = install(config)
    app = create_sdi_app(config)
    worker = EmbeddedWorker(queue, workers)
    app.router.on_startup.append(worker.start)
    app.router.on_shutdown.append(worker.stop)
    uvicorn.Server(uvicorn_config(app, config, host, port)).run()
