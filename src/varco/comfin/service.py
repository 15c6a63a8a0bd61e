"""Financial communications (§2.7, §3.2, §4.2): accept, transmit, record the SDI's esito, preserve."""

from __future__ import annotations

import base64
import logging
import secrets
from dataclasses import dataclass
from datetime import datetime

from varco.accounts import service as accounts
from varco.accounts.models import Account
from varco.comfin import files, inbound, states
from varco.comfin.errors import ComfinRefused
from varco.comfin.models import ComfinRequest
from varco.comfin.repository import ComfinRepository
from varco.core import blobs, jobs
from varco.core.clock import Clock
from varco.core.errors import NotFound
from varco.core.uow import UnitOfWork
from varco.limits import annual, usage
from varco.limits.errors import LimitError
from varco.preservation import communications
from varco.preservation.package import PackedFile
from varco.sdi import channels
from varco.settings import Settings

log = logging.getLogger("varco.comfin")
TRANSMIT = jobs.Task("comfin.transmit", ("request_pk",))  # run by comfin.tasks.transmit
_BASE36 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class NewRequest:
    user_id: str | None
    kind: str | None
    data_file: str | None


def create(
    session: UnitOfWork, caller: Account, new: NewRequest, clock: Clock, settings: Settings
) -> ComfinRequest:
    """Check a communication (§7.4 AR codes), store it, charge usage, and send it after commit."""
    _check_user_id(session, caller, new.user_id)
    kind = (new.kind or "").strip().upper()
    data = files.read(new.data_file, kind, settings.max_upload_bytes, files.archive_limits(settings))
    declarants = {c.tax_code for c in data.communications}
    if len(declarants) != 1:
        raise ComfinRefused("AR03", f"the files name several declarants ({', '.join(sorted(declarants))})")
    tax_code = declarants.pop()
    owner = _declarant(session, caller, tax_code)
    try:  # §8.4 (the v2 path was already checked by the limits guard; v1 authenticates in the body)
        annual.refuse_transmission_if_locked(session, caller, settings, clock)
    except LimitError as exc:
        raise ComfinRefused("AR10", str(exc), headers=exc.headers) from None
    payer = accounts.paying_account(session, caller)  # known now: no query
    now = clock.now()
    blob = blobs.store(session, f"comfin-{kind}.bin", data.content, owner.id, now)
    request = ComfinRequest(
        request_id=secrets.token_hex(6),
        account_id=owner.id,
        sent_by_id=caller.id,
        user_id=(new.user_id or None),
        kind=kind,
        tax_code=tax_code,
        blob_id=blob.id,
        is_zip=data.is_zip,
        file_count=len(data.communications),
        file_name=f"pending-{secrets.token_hex(8)}",
        result="SF01",
        status=states.STATUS["SF01"],
        created_at=now,
        updated_at=now,
    )
    repo = ComfinRepository(session)
    repo.add(request)
    request.file_name = file_name(tax_code, kind, request.id, data.is_zip)
    blobs.rename(session, blob.id, request.file_name)
    for _ in data.communications:  # §8.4/§8.5: every communication counts like an invoice
        usage.charge(session, payer, clock)
    jobs.enqueue(session, TRANSMIT, key=f"comfin.transmit:{request.id}", clock=clock, request_pk=request.id)
    log.info("comfin %s accepted: %s %s for %s", request.request_id, kind, request.file_name, owner.username)
    return request


def file_name(tax_code: str, kind: str, pk: int, is_zip: bool) -> str:
    """decisions.md: `IT<fiscal code>_<LI|DF>_<progressive>.xml` (`.zip` for a ZIP of files)."""
    progressive, n = "", pk
    while n:
        n, digit = divmod(n, 36)
        progressive = _BASE36[digit] + progressive
    return f"IT{tax_code}_{kind}_{progressive.rjust(5, '0')}.{'zip' if is_zip else 'xml'}"


def _check_user_id(session: UnitOfWork, caller: Account, user_id: str | None) -> None:
    """§2.7 userId "equals the username": the caller, or a taxpayer who delegated it (ACTIVE)."""
    if not user_id or user_id.strip().lower() == caller.username.lower():
        return
    found = ComfinRepository(session).delegator_by_username(caller.id, user_id.strip())
    if found is None or found[1] != "ACTIVE":
        raise ComfinRefused(
            "AR02", f"userId {user_id!r} is not you ({caller.username}) nor a taxpayer you act for"
        )


def _declarant(session: UnitOfWork, caller: Account, tax_code: str) -> Account:
    """AR09 for a stranger's declarant, AR02 when the declarant's delegation to the caller is not ACTIVE."""
    own = {c.upper() for c in (caller.fiscal_code, caller.vat_code) if c}
    if tax_code in own:
        return caller
    found = ComfinRepository(session).delegator_by_tax_code(caller.id, tax_code)
    if found is None:
        raise ComfinRefused(
            "AR09", f"the declarant {tax_code} is neither you nor a taxpayer who delegated you"
        )
    delegator, status = found
    if status != "ACTIVE" or delegator.is_disabled:
        raise ComfinRefused(
            "AR02", f"the delegation from {delegator.username} ({tax_code}) is {status}, not ACTIVE"
        )
    return delegator


def get_visible(session: UnitOfWork, caller: Account, request_id: str | None) -> ComfinRequest:
    """The caller's request (sent by it, or of a taxpayer it may see); else 404 (existence hidden)."""
    if not request_id or not request_id.strip():
        raise ComfinRefused("AR04", "requestId is missing")
    request = ComfinRepository(session).by_request_id(request_id.strip())
    if request is None or (
        request.sent_by_id != caller.id
        and request.account_id not in accounts.visible_account_ids(session, caller)
    ):
        raise NotFound(f"no communication request {request_id!r} among yours")
    return request


def transmit(session: UnitOfWork, pk: int, clock: Clock) -> None:
    """Hand the file to the SDI channel (idempotent: a request with a fileId is not sent again)."""
    repo = ComfinRepository(session)
    request = repo.get_for_update(pk)
    if request is None or request.file_id is not None or request.result != "SF01":
        return
    receipt = channels.get_communication_channel().send_communication(
        session, request.id, request.file_name, request.kind, repo.content(request.blob_id), clock
    )
    if receipt is not None:  # else the channel records it when the SDI answers
        inbound.record_receipt(session, request.id, receipt.file_id, receipt.received_at, clock)


def seal(session: UnitOfWork, pk: int, clock: Clock) -> None:
    """Build the preservation package: the file as sent, the esito, an index; pddAvailable afterwards."""
    repo = ComfinRepository(session)
    request = repo.get_for_update(pk)
    if request is None or request.notify_blob_id is None:
        return
    owner = accounts.get(session, request.account_id)
    sent_name = request.file_name if request.is_zip else f"{request.file_name}.p7m"
    communications.seal_communication(
        session,
        comfin_request_id=request.id,
        account_id=request.account_id,
        name=f"{request.file_name.rsplit('.', 1)[0]}.conservazione.zip",
        subject={
            "account": {
                "username": owner.username if owner else None,
                "countryCode": owner.country_code if owner else None,
                "vatCode": owner.vat_code if owner else None,
            },
            "communication": {
                "requestId": request.request_id,
                "comunicationType": request.kind,
                "fileName": request.file_name,
                "fileId": request.file_id,
                "declarant": request.tax_code,
                "receiptTimestamp": request.receipt_at.isoformat() if request.receipt_at else None,
                "elaboratedResult": request.elaborated_result,
            },
        },
        files=[
            PackedFile(sent_name, repo.content(request.blob_id), "communication"),
            PackedFile(
                request.notify_filename or "esito.xml",
                repo.content(request.notify_blob_id),
                "notification",
                "ES",
            ),
        ],
        clock=clock,
    )
    request.pdd_available = True


def notify_result(session: UnitOfWork, request: ComfinRequest) -> str | None:
    """§2.7 notifyResult: base64 of the SDI's esito XML, once there is one."""
    if request.notify_blob_id is None:
        return None
    return base64.b64encode(ComfinRepository(session).content(request.notify_blob_id)).decode()


def package_of(session: UnitOfWork, caller: Account, request_id: str | None) -> tuple[str, bytes]:
    """(name, ZIP) of the request's preservation package; 404 while pddAvailable is false."""
    from varco.preservation import communications

    request = get_visible(session, caller, request_id)
    found = (
        communications.latest_communication_package(session, request.id) if request.pdd_available else None
    )
    if found is None:
        raise NotFound(f"the preservation package of request {request.request_id} is not available yet")
    return found


def give_up(session: UnitOfWork, pk: int, result: str, reason: str, clock: Clock) -> None:
    """AR06 (never transmitted) or AR07 (no esito in time), from the reconciler."""
    request = ComfinRepository(session).get_for_update(pk)
    if request is None or request.result != "SF01":
        return
    request.result = states.next_result(request.result, result)
    request.status, request.error, request.updated_at = states.STATUS[result], reason, clock.now()


def stuck(session: UnitOfWork, *, sent: bool, before: datetime) -> list[int]:
    return ComfinRepository(session).stuck("SF01", sent=sent, before=before)


def unsealed(session: UnitOfWork, limit: int) -> list[int]:
    return ComfinRepository(session).unsealed(limit)
