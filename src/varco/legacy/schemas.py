"""§9 version-1 bodies of the communication calls (every field optional: a missing one is a code)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class V1Credentials(BaseModel):
    model_config = ConfigDict(extra="ignore")

    userName: str | None = None
    password: str | None = None


class CreateTransmission(V1Credentials):
    userID: str | None = None
    comunicationType: str | None = None
    dataFile: str | None = None


class CreateTransmissionResult(BaseModel):
    errorCode: str
    errorDescription: str
    requestID: str


class TransmissionQuery(V1Credentials):
    requestID: str | None = None


class TransmissionInfo(BaseModel):
    result: str
    error: str
    notifyResult: str | None
    elaboratedResult: str | None
    receiptTimestamp: str | None
    fileID: str | None
    fileName: str | None
    pddAvailable: bool
