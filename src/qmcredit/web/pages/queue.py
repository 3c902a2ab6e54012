"""The examiner's queue: claims submitted and under review, oldest change first, filtered by status
and by how long they have waited, with the claims list's search, sorting, paging and export."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from ...service.auth import Principal
from .guard import viewer
from .lists import listing

router = APIRouter(include_in_schema=False)

WAITING = ("submitted", "under_review")
AGES = (("", "any"), ("7", "a week or more"), ("30", "30 days or more"), ("90", "90 days or more"))


@router.get("/queue")
def review_queue(request: Request, who: Principal = Depends(viewer)):
    return listing(request, who, "queue.html", "review-queue", "updated", WAITING, ages=AGES)
