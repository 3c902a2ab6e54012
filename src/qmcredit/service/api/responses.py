"""Exact JSON responses (money and positions stay strings; a Decimal is written digit for digit)
and the error responses every route documents."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from .. import exact_json


class ExactJSONResponse(JSONResponse):
    def render(self, content: Any) -> bytes:
        return exact_json.dumps(content).encode("utf-8")


class ProblemOut(BaseModel):
    location: str
    message: str


class ErrorOut(BaseModel):
    """Every refusal: a one-line error and the problems, each naming the field."""

    error: str
    problems: list[ProblemOut]


def errors(*codes: int) -> dict:
    described = {400: "Malformed request", 401: "Not signed in", 403: "Not allowed for this role",
                 404: "No such record that you may see", 409: "Conflicts with the stored state",
                 413: "Body larger than the upload limit", 415: "Unsupported content type",
                 422: "Invalid field(s), each named", 429: "Too many wrong passwords: wait"}
    return {c: {"model": ErrorOut, "description": described[c]} for c in codes}


COMMON = errors(400, 401, 403, 404, 422)
WRITE = errors(400, 401, 403, 404, 409, 413, 415, 422)


#: a record id: a positive 32-bit integer (the databases' primary keys)
MAX_ID = 2**31 - 1
RecordId = Annotated[int, Path(ge=1, le=MAX_ID, description="a record id")]
