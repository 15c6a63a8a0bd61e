"""§4.3 upload request and §2.8 upload result, tolerant of what real clients send (decisions.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from varco.core.fields import LenientBool, OptionalText


class UploadRequest(BaseModel):
    """Both upload paths; unknown fields (e.g. `signed`) are ignored."""

    model_config = ConfigDict(
        extra="ignore",
        json_schema_extra={
            "example": {
                "dataFile": "PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0iVVRGLTgiPz4K...",
                "credential": "",
                "domain": "",
                "senderPIVA": "",
                "skipExtraSchema": False,
                "dryRun": False,
            }
        },
    )

    dataFile: OptionalText = Field(default=None, description="Base64 of the invoice file")
    credential: OptionalText = Field(default=None, description="Automatic-signature credential (upload only)")
    domain: OptionalText = Field(default=None, description="Automatic-signature domain (upload only)")
    senderPIVA: OptionalText = Field(default=None, description="TD26 only: country code + VAT of the sender")
    skipExtraSchema: LenientBool = False
    dryRun: LenientBool = False


class UploadResult(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "uploadFileName": "IT05555550028_0000A.xml",
                    "errorCode": "0000",
                    "errorDescription": "Operation done [request 3f2a9c1d0b7e4a55]",
                },
                {
                    "uploadFileName": None,
                    "errorCode": "0096",
                    "errorDescription": "00313 - 1.1.4 <CodiceDestinatario> is XXXXXXX but the client "
                    "is Italian [request 3f2a9c1d0b7e4a55]",
                },
            ]
        }
    )

    uploadFileName: str | None
    errorCode: str
    errorDescription: str
