"""Filings that arrive at once are read and decided together (``service/together.py``), and each
gets exactly what it gets alone: its own claim and determination, or its own refusal."""

from __future__ import annotations

import json
import threading


from qmcredit.service import evaluate as ev
from qmcredit.service.exact_json import loads
from qmcredit.service.together import Together

from .conftest import post_at_once, variant

CLAIMS = "/api/v1/claims"


def _held_first(one):
    """``one`` whose first call waits until released, so that the filings after it queue."""
    release, calls = threading.Event(), []

    def run(d):
        calls.append(d)
        if len(calls) == 1:
            release.wait(10)
        return one(d)
    return run, release, calls


def _file_at_once(together, first, queued) -> dict:
    """``first`` filed alone and held; ``queued`` filed meanwhile; then ``first`` released."""
    out: dict = {}

    def file(d):
        try:
            out[d] = together(d)
        except ValueError as e:
            out[d] = f"refused: {e}"

    lead = threading.Thread(target=file, args=(first,))
    lead.start()
    while not together._busy:
        threading.Event().wait(0.005)
    rest = [threading.Thread(target=file, args=(d,)) for d in queued]
    for t in rest:
        t.start()
    while len(together._waiting) < len(queued):
        threading.Event().wait(0.005)
    return out, [lead, *rest]


def test_filings_queued_behind_a_decision_are_decided_in_one_group_each_with_its_own_answer():
    groups = []
    one, release, calls = _held_first(lambda d: d * 10)
    together = Together(lambda docs: groups.append(list(docs)) or [ValueError(f"bad {d}") if d == 3 else d * 10 for d in docs], one)
    out, threads = _file_at_once(together, 1, (2, 3, 4))
    release.set()
    for t in threads:
        t.join(10)
    assert out == {1: 10, 2: 20, 3: "refused: bad 3", 4: 40}
    assert calls == [1] and groups == [[2, 3, 4]]  # the lone filing alone, the three that waited in one group


def test_a_group_that_fails_is_decided_filing_by_filing_so_no_filing_fails_for_another():
    def many(docs):
        raise RuntimeError("one document broke the group")

    def own(d):
        if d == "bad":
            raise ValueError("this filing's own problem")
        return d.upper()

    one, release, calls = _held_first(own)
    together = Together(many, one)
    out, threads = _file_at_once(together, "a", ("bad", "c", "d"))
    release.set()
    for t in threads:
        t.join(10)
    assert out == {"a": "A", "bad": "refused: this filing's own problem", "c": "C", "d": "D"}
    assert sorted(calls) == ["a", "bad", "c", "d"]
    assert together("e") == "E" and not together._busy and not together._waiting


def test_claims_filed_at_once_over_http_store_what_each_gets_alone(live_office, monkeypatch):
    office = live_office.office
    sizes: list[int] = []
    many = ev._decided._many
    monkeypatch.setattr(ev._decided, "_many", lambda docs: sizes.append(len(docs)) or many(docs))
    bodies = [variant(name, ein=f"47-{k:07d}") for k, name in enumerate(["01", "02", "03", "04", "05"] * 3)]
    bad = json.loads(variant("03", ein="47-9999999"))
    bad["employees"][0]["hours"][next(iter(bad["employees"][0]["hours"]))] = "1,60"  # two readings: refused, this claim only
    bodies.append(json.dumps(bad).encode())
    answers = post_at_once(live_office.base, [(body, office.auth("preparer")) for body in bodies])
    assert [a.status_code for a in answers] == [201] * 15 + [422], [a.text[:300] for a in answers]
    assert "1,60" in answers[-1].text
    for body, answer in zip(bodies, answers[:15]):
        stored = office.client.get(f"{CLAIMS}/{answer.json()['id']}/determination", headers=office.auth("examiner"))
        alone = ev._one(loads(body))[1]
        assert loads(stored.text) == loads(alone.to_json())
    assert max(sizes, default=0) > 1  # sixteen filings at one barrier: those behind the first are decided in groups
