"""All configuration, from the environment (prefix VARCO_). Every number of the contract lives here."""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, FilePath, IPvAnyNetwork, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict
from sqlalchemy.engine import URL

DEMO_SECRET = "varco-demo-secret-change-me"

# §8.2: tier -> (requests per hour, requests per year)
DEFAULT_TIERS: dict[int, tuple[int, int]] = {
    0: (60, 10_000),
    1: (600, 100_000),
    2: (3_000, 500_000),
    3: (6_000, 1_000_000),
    4: (12_000, 2_000_000),
    5: (18_000, 3_000_000),
    6: (30_000, 5_000_000),
}


def _seconds(value: object) -> object:
    """Durations from the environment may be plain seconds ("1800") as well as ISO 8601 ("PT30M")."""
    if isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit():
        return float(value)
    return value


Duration = Annotated[timedelta, BeforeValidator(_seconds)]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="VARCO_", env_file=None, extra="ignore")

    profile: Literal["demo", "production"] = "demo"
    data_dir: Path = Path("./varco-data")
    database_url: str | None = None  # default: SQLite file in data_dir
    redis_url: str | None = None  # unset = embedded mode (SqliteHuey, in-process limiter state)
    idempotency_retention: Duration = timedelta(hours=24)  # Idempotency-Key: answers kept this long
    queue_name: str = "varco"  # the job queue's name (its Redis keys): installations sharing a Redis differ
    secret_key: SecretStr = SecretStr(DEMO_SECRET)
    # §1: 1.1.1 IdTrasmittente must be the intermediary's country + tax code (check 0094).
    transmitter_id: str = "IT05555550028"
    transmitter_phone: str | None = None
    transmitter_email: str | None = None
    recipient_code: str = "VARCO00"  # our own seven-character SDI recipient code
    demo_data: bool = True  # demo profile: create demo accounts on first start

    # §2.1, §3.4, §5.5: token lifetimes
    access_token_ttl: Duration = timedelta(seconds=1800)
    refresh_token_ttl: Duration = timedelta(seconds=3600)

    # §8.1 service limits (per IP, per minute)
    ip_limits_enabled: bool = True
    auth_requests_per_minute: int = 1
    upload_requests_per_minute: int = 30
    upload_signed_requests_per_minute: int = 30
    find_requests_per_minute: int = 12
    # Failed password checks (sign-in, v1 body credentials, panel) per IP address and per user
    # name: past the limit, 429 without checking (docs/security.md); 0 switches it off
    credential_failures_limit: int = 10
    credential_failures_window: Duration = timedelta(minutes=15)
    trusted_proxies: list[str] = Field(default_factory=list)  # IPs or CIDRs whose X-Forwarded-For we honour
    # §8.3 hourly flow control per paying account; off only for load tests (like ip_limits_enabled)
    tier_limits_enabled: bool = True
    tier_idle_reset: Duration = timedelta(hours=1)  # §8.3.2: cleared after one hour without any request
    limits_key_prefix: str = "varco:limits:"  # Redis keys of the limiter state
    limits_redis_timeout_seconds: float = 0.5  # Redis unreachable within this: 503 (docs/limits.md)
    # how long the hourly bucket may reuse "who pays for this account" (delegations, tier) per process
    limits_attribution_ttl: Duration = timedelta(seconds=10)
    # §8.4 official e-mail; no smtp_host = embedded outbox (table + files in data_dir/mail)
    smtp_host: str | None = None
    smtp_port: int = 25
    smtp_username: str | None = None
    smtp_password: SecretStr | None = None
    smtp_security: Literal["none", "starttls", "tls"] = "none"
    smtp_timeout_seconds: float = 10.0
    mail_from: str = "varco <noreply@varco.invalid>"

    # §8.1 / §7.2 0033: size of a sent file
    max_upload_bytes: int = 5 * 1024 * 1024
    # Request bodies are counted while they are read, before authentication and parsing (413,
    # docs/security.md): every route but those carrying a file; sign-in's form included.
    max_body_bytes: int = 1024 * 1024
    # Routes carrying a file (upload, uploadSigned, comfin, the panel's upload): unset = the largest
    # file as base64 with line breaks, plus room for the JSON around it (`file_body_bytes`).
    max_file_body_bytes: int | None = None
    # Archives (a communication's ZIP, `varco validate`): counted while inflating, headers never
    # trusted (docs/security.md)
    archive_max_entries: int = 100
    archive_max_entry_bytes: int = 5 * 1024 * 1024
    archive_max_total_bytes: int = 20 * 1024 * 1024
    # §8.1: multiseller / search page size
    page_size_default: int = 10
    page_size_max: int = 100
    # §8.1: report retry after a 202
    report_retry_seconds: int = 60
    # §4.1 report: a finished report is served this long, then a call starts a new one (contract silent)
    report_ttl: Duration = timedelta(minutes=10)
    # §8.2 tiers
    tiers: dict[int, tuple[int, int]] = Field(default_factory=lambda: dict(DEFAULT_TIERS))
    default_tier: int = 0
    default_max_space_kb: int = 1_048_576  # 1 GiB of storage purchased by default
    # §8.1: processing of an invoice file within 24 hours of receipt
    processing_deadline: Duration = timedelta(hours=24)
    # §7.2 0034: the same file content sent again within this window while still in processing
    duplicate_upload_window: Duration = timedelta(hours=24)
    # Reconciler: work older than this with no progress is re-enqueued.
    stale_job_after: Duration = timedelta(minutes=2)
    reconcile_interval_seconds: int = 60
    # Due first attempts of a batching job kind (an invoice's asynchronous stage) that one worker
    # runs in one transaction: one commit, one claim, the per-transaction look-ups shared
    # (core/jobs.py; docs/architecture.md, "Jobs in batches"). 1 turns batching off.
    job_batch: int = Field(default=8, ge=1, le=100)
    # PostgreSQL: how long a worker that claimed fewer than job_batch of them waits for more to come
    # due before it runs them (docs/architecture.md, "Gathering a batch"); 0 runs them at once.
    job_batch_wait: Duration = Field(
        default=timedelta(milliseconds=250), ge=timedelta(0), le=timedelta(seconds=5)
    )
    # In-process worker threads for `varco serve` in embedded mode.
    embedded_workers: int = 2
    # `varco worker` lowers its CPU priority by this much at start (os.nice): on a machine it shares
    # with API processes, requests are served first and the jobs take the rest (docs/operations.md,
    # "Processes"). 0 leaves it as started.
    worker_nice: int = Field(default=10, ge=0, le=19)
    # Graceful shutdown (docs/operations.md, Shutdown): on SIGTERM `varco serve` and `varco worker`
    # take no new requests or jobs at once; those in flight get this long, counted from the signal,
    # to finish. A job cut off stays pending and the reconciler runs it again. Keep it below the
    # supervisor's kill timeout (systemd TimeoutStopSec, Kubernetes terminationGracePeriodSeconds).
    shutdown_timeout: Duration = timedelta(seconds=30)
    # The channel to the Exchange System (docs/sdicoop.md): "simulator" (in this process) or
    # "sdicoop" (SOAP 1.1 web services with mutual TLS). Unset: the simulator on the demo
    # profile; the production profile refuses to start without an explicit choice.
    sdi_channel: Literal["simulator", "sdicoop"] | None = None
    # Calling the SDI: varco's client certificate and key (PEM), the SDI's CA bundle, the services
    # (test and production hosts differ; both are settings, never constants)
    sdicoop_cert: Path | None = None
    sdicoop_key: Path | None = None
    sdicoop_ca: Path | None = None
    sdicoop_ricevi_file_url: str | None = None
    sdicoop_ricevi_notifica_url: str | None = None
    sdicoop_trasmissione_file_url: str | None = None
    sdicoop_timeout_seconds: float = 60.0
    sdicoop_retry_base: Duration = timedelta(minutes=1)  # EI02, ES02, a refused connection: doubling
    sdicoop_retry_max_delay: Duration = timedelta(hours=1)
    # The SDI may have a file whose answer was lost: no second call before this (its notifications
    # name the file and settle it meanwhile); then a re-send, whose copy the SDI refuses (00002)
    sdicoop_unknown_resend_after: Duration = timedelta(days=2)
    sdicoop_poll_interval: Duration = timedelta(minutes=5)  # SdITrasmissioneFile.Esito
    # Being called by the SDI (/sdicoop/...): the client certificates are checked by TLS on the
    # listener of `varco serve --sdicoop-port` (issued by `sdicoop_client_ca`); behind a reverse
    # proxy that checks them, this header (from VARCO_TRUSTED_PROXIES only) must say SUCCESS.
    sdicoop_client_ca: Path | None = None
    sdicoop_server_cert: Path | None = None  # that listener's own certificate and key (PEM)
    sdicoop_server_key: Path | None = None
    sdicoop_client_verify_header: str | None = None
    sdicoop_inbound_open: bool = False  # tests only: /sdicoop on the main listener, unchecked
    # Search (issue 7): v2 creation window, bulk downloads, preservation packages
    search_window: Duration = timedelta(days=10)  # decisions.md: creation window at most 10 days
    download_max_ids: int = 1000  # invoices per bulk download
    download_chunk_size: int = 100  # invoices packed per job step (progress advances per step)
    download_chunk_bytes: int = 20 * 1024 * 1024  # and at most these stored bytes (memory per step)
    download_pdf_chunk_size: int = 10  # with PDFs: rendering is slow, and a step holds the database
    download_max_bytes: int = 200 * 1024 * 1024  # a bigger ZIP fails: ask for fewer invoices
    download_retention: Duration = timedelta(hours=24)  # then the ZIP and the jobId are deleted
    preservation_batch: int = 500  # invoices sealed per reconciler run
    # Financial communications (issue 10, docs/comfin.md)
    comfin_send_deadline: Duration = timedelta(hours=24)  # §8.1 sending within 24 hours, else AR06
    comfin_outcome_deadline: Duration = timedelta(days=5)  # no esito by then: AR07
    # Callbacks and event feed (issue 12, docs/callbacks.md)
    callback_timeout_seconds: float = 10.0  # one delivery attempt: connect, send, answer
    callback_retry_window: Duration = timedelta(days=1)  # retried for a day, then the endpoint is disabled
    callback_retry_base: Duration = timedelta(minutes=1)  # first back-off; doubles after each failure
    callback_retry_max_delay: Duration = timedelta(hours=4)
    callback_max_per_account: int = 10
    # CIDRs a callback may reach although loopback or private (never link-local, metadata, reserved...);
    # unset: loopback (127.0.0.0/8, ::1) on the demo profile, none in production (callbacks/urls.py)
    callback_allowed_networks: list[IPvAnyNetwork] | None = None
    # PEM bundle of CAs trusted for callback receivers besides the system's (a private CA)
    callback_ca_bundle: FilePath | None = None
    events_page_default: int = 100  # GET /api/v2/events limit
    events_page_max: int = 1000
    events_feed_wait: Duration = timedelta(seconds=5)  # PostgreSQL: longest wait for in-flight events
    # Control panel (issue 11, docs/panel.md)
    panel_session_ttl: Duration = timedelta(hours=8)  # a browser session, then sign in again
    panel_receipt_batch: int = 200  # received invoices queued for e-mail per reconciler run
    # Metrics and logs (docs/operations.md). /metrics in Prometheus text format; off: no counting
    # and no route (the bench's "without" run).
    metrics_enabled: bool = True
    # Several processes on one host (production: N `varco serve`, N `varco worker`): a directory
    # they share, where each writes its counts (prometheus_client's multiprocess mode) and /metrics
    # adds them up. Unset: this process's counts only (the embedded default is one process).
    metrics_dir: Path | None = None
    # Who may read /metrics: a bearer token and/or client networks (both must pass when both are
    # set). Neither: open on the demo profile, refused (403) in production.
    metrics_token: SecretStr | None = None
    metrics_allow: list[IPvAnyNetwork] | None = None
    # One line per request and per job: "json" or "console"; unset: console on the demo profile,
    # JSON in production
    log_format: Literal["json", "console"] | None = None
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    @model_validator(mode="after")
    def _refuse_unsafe_production(self) -> Settings:
        if self.profile == "production":
            if (
                self.secret_key.get_secret_value() == DEMO_SECRET
                or len(self.secret_key.get_secret_value()) < 32
            ):
                raise ValueError(
                    "VARCO_SECRET_KEY must be set to a random value of 32+ characters in production"
                )
            if self.resolved_database_url.startswith("sqlite"):
                raise ValueError("VARCO_DATABASE_URL must point at PostgreSQL in production (SQLite refused)")
            if self.sdi_channel is None:
                raise ValueError("VARCO_SDI_CHANNEL must be set in production: simulator or sdicoop")
            if self.sdicoop_inbound_open:
                raise ValueError("VARCO_SDICOOP_INBOUND_OPEN is for tests: refused in production")
        if len(self.recipient_code) != 7:
            raise ValueError("VARCO_RECIPIENT_CODE must have seven characters")
        # `VARCO_METRICS_TOKEN=${TOKEN}` with TOKEN unset would otherwise open /metrics to an empty
        # bearer; spaces around a token (an env file) would make it one no client can send.
        token = self.metrics_token.get_secret_value() if self.metrics_token is not None else None
        if token is not None and (not token.strip() or token != token.strip()):
            raise ValueError(
                "VARCO_METRICS_TOKEN is empty or has spaces around it: set a random token, or unset it"
            )
        return self

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        # Built, not formatted: a `?`, `#` or `%` in the path is escaped, not read as URL syntax.
        path = str((self.data_dir / "varco.sqlite3").resolve())
        return URL.create("sqlite", database=path).render_as_string(hide_password=False)

    @property
    def file_body_bytes(self) -> int:
        """Largest body of a route carrying a file: base64 adds 4/3 and MIME line breaks ~3 %."""
        if self.max_file_body_bytes is not None:
            return self.max_file_body_bytes
        return self.max_upload_bytes * 4 // 3 * 103 // 100 + 64 * 1024

    @property
    def channel(self) -> str:
        """The SDI channel in use: the simulator unless `sdi_channel` says otherwise."""
        return self.sdi_channel or "simulator"

    @property
    def resolved_log_format(self) -> str:
        """Human-readable lines on the demo profile, JSON in production, unless set."""
        return self.log_format or ("json" if self.profile == "production" else "console")

    @property
    def embedded(self) -> bool:
        return not self.redis_url

    def tier_limits(self, tier: int) -> tuple[int, int]:
        return self.tiers[tier]


@lru_cache
def get_settings() -> Settings:
    return Settings()
