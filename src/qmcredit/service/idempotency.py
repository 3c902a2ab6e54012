"""``Idempotency-Key`` of every request that stores something (filing, amending, next year's
period, a workflow step, a decision, a refund certification, a document, an evidence request, a
taxpayer, an API token): a client that lost the answer sends the same request with the same key
again and gets the first answer, status and body, with nothing stored anew. Keys are the user's
own (another user's same key is another key) and are kept as long as the claims. The same key with
another request (another route, document, body, file or query) is refused (422). Only a request
that stored something keeps its key: a refusal stores nothing, so its retry is answered afresh
(the same refusal, unless the records changed meanwhile). An API token's secret is shown once: a
replay gives the token's record without it.

Simultaneous requests with one key: the key's row is written first in the request's transaction,
so the second waits on its primary key, fails when the first commits, and ``Database.write`` reruns
it: it then finds the key and replays the first answer.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from fastapi.responses import Response
from sqlalchemy.orm import Session

from . import exact_json
from .api.responses import ExactJSONResponse
from .auth import Principal
from .errors import ApiError
from .evaluate import Upload
from .models import IdempotencyKey

HEADER = "Idempotency-Key"
_KEY = re.compile(r"[\x21-\x7e]{1,255}")  # visible ASCII, as in the IETF httpapi draft's examples


def key_of(key: str | None) -> str | None:
    """The request's key, or None; a malformed one is refused naming the header."""
    if key is None:
        return None
    if not _KEY.fullmatch(key):
        raise ApiError(422, f"the {HEADER} header is malformed", [(
            "header.idempotency-key", "send 1 to 255 visible ASCII characters (a UUID, say), one new key per new filing")])
    return key


def fingerprint(document: bytes, upload: Upload | None, **query) -> str:
    """SHA-256 of what the request asks: the claim document (or body), the file uploaded (name,
    type and content) and the query parameters, among them the route (``route="POST /claims/1/review"``,
    every route but ``POST /claims``, whose keys came first); multipart boundaries and header
    order play no part."""
    parts = {"document": hashlib.sha256(document).hexdigest(), "query": {k: str(v) for k, v in sorted(query.items())},
             "payroll": None if upload is None else [upload.filename, upload.media_type, upload.sha256]}
    return hashlib.sha256(exact_json.dumps(parts).encode("utf-8")).hexdigest()


def _checked(row: IdempotencyKey, request_sha256: str) -> IdempotencyKey:
    if row.request_sha256 != request_sha256:
        raise ApiError(422, f"this {HEADER} was used for another request", [(
            "header.idempotency-key",
            f"{row.key!r} was first sent with another request (route, claim document, body, file or query"
            f"{f'; claim {row.claim_id}' if row.claim_id is not None else ''}); a retry sends the same request again, "
            "a new request a new key")])
    return row


def find(session: Session, who: Principal, key: str, request_sha256: str) -> IdempotencyKey | None:
    """The stored answer to this key, if any (a key used for another request is refused)."""
    row = session.get(IdempotencyKey, (who.id, key))
    return None if row is None else _checked(row, request_sha256)


def stored(db, who: Principal, key: str, request_sha256: str) -> IdempotencyKey | None:
    """``find``, in a reading session of its own (before the work of a request is started)."""
    with db.read() as session:
        return find(session, who, key, request_sha256)


def take(session: Session, who: Principal, key: str, request_sha256: str) -> IdempotencyKey | None:
    """In the filing's transaction, before anything else: the stored answer when the key is
    known, or None after writing the key's row (which ``keep`` completes)."""
    row = find(session, who, key, request_sha256)
    if row is not None:
        return row
    session.add(IdempotencyKey(user_id=who.id, key=key, request_sha256=request_sha256, status=0, response=""))
    session.flush()  # a simultaneous request with this key waits here, then fails and is rerun
    return None


def keep(session: Session, who: Principal, key: str, claim_id: int | None, status: int, body: Any) -> IdempotencyKey:
    row = session.get(IdempotencyKey, (who.id, key))
    row.claim_id, row.status, row.response = claim_id, status, exact_json.dumps(body)
    return row


def replay(row: IdempotencyKey, replayed: bool) -> Response:
    """The answer kept for a key; ``Idempotent-Replayed: true`` when it is a retry's."""
    headers = {"Idempotent-Replayed": "true"} if replayed else {}
    return Response(row.response.encode("utf-8"), status_code=row.status, media_type="application/json", headers=headers)


class Answer(NamedTuple):
    """What a change answers: its status and body, the claim it concerns, and (when the body holds
    what is shown once, a token's secret) the body a replay gives instead."""

    status: int
    body: Any
    claim_id: int | None = None
    kept: Any = None


def once(db, who: Principal, key: str | None, request_sha256: str, work: Callable[[Session], Answer]) -> Response:
    """Run ``work`` as one transaction and answer what it answers; with a key, at most once: a retry
    (also one sent while the first runs) gets the first answer, and nothing runs again."""
    if key is None:
        answer = db.write(work)
        return ExactJSONResponse(answer.body, status_code=answer.status)
    kept = stored(db, who, key, request_sha256)
    if kept is not None:
        return replay(kept, replayed=True)

    def keyed(session: Session):
        kept = take(session, who, key, request_sha256)
        if kept is not None:
            return kept
        answer = work(session)
        keep(session, who, key, answer.claim_id, answer.status, answer.body if answer.kept is None else answer.kept)
        return answer

    done = db.write(keyed)
    if isinstance(done, IdempotencyKey):
        return replay(done, replayed=True)
    return ExactJSONResponse(done.body, status_code=done.status)
