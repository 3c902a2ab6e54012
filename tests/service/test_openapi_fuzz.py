"""The published OpenAPI schema, exercised by schemathesis (property-based, a bounded number of
examples per operation): whatever it sends, the office answers without a server error."""

from __future__ import annotations

import traceback

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import not_a_server_error

from qmcredit.service.seed import seed

from .conftest import DATABASES, fresh_database, make_office


@pytest.fixture(scope="module", params=DATABASES)
def fuzzed_office(request, tmp_path_factory):
    """The office with the demo users and example claims, on each database (PostgreSQL refuses
    what SQLite takes: NUL characters, over-long text, integers beyond 32 bits)."""
    with fresh_database(request.param, tmp_path_factory.mktemp("fuzz")) as url:
        office = make_office(url)
        seeded = seed(office.db)
        office.tokens.update({f"demo-{k}": v for k, v in seeded.tokens.items()})
        with office.client:
            yield office
        office.db.dispose()


#: not fuzzed: revoking the fuzzer's own token would sign it out for the operations after it
KEEPS_SIGN_IN = {"DELETE /api/v1/tokens/{token_id}"}


def _fuzz(office, user: str) -> tuple[list[str], list[str], int]:
    """Run every operation of the published schema with generated requests as ``user``. Returns the
    server errors found, split into the service's own and those raised inside the core engine
    (``qmcredit`` outside ``qmcredit.service``), each as 'METHOD path: exception', and the number
    of requests sent."""
    api = schemathesis.openapi.from_asgi("/openapi.json", office.client.app)
    service: list[str] = []
    engine: list[str] = []
    sent = 0
    for result in api.get_all_operations():
        operation = result.ok()
        if operation.label in KEEPS_SIGN_IN:
            continue
        sent += _fuzz_operation(operation, office.auth(user), service, engine)
    return service, engine, sent


def _fuzz_operation(operation, headers: dict, service: list[str], engine: list[str]) -> int:
    sent = []

    @given(case=operation.as_strategy())
    @FUZZ
    def run(case):
        sent.append(1)
        try:
            case.call_and_validate(headers=headers, checks=[not_a_server_error])
        except Exception as e:
            frames = [f.filename for f in traceback.extract_tb(e.__traceback__)]
            ours = [f for f in frames if "/qmcredit/" in f]
            where = engine if ours and "/qmcredit/service/" not in ours[-1] else service
            line = f"{operation.label}: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
            if line not in where:
                where.append(line)
            raise

    found = len(service) + len(engine)
    try:
        run()
    except Exception:
        if len(service) + len(engine) == found:  # a failure of the test itself, not a server error found
            raise
    return len(sent)


FUZZ = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                database=None, print_blob=False, phases=[Phase.explicit, Phase.generate])


def test_openapi_is_published(fuzzed_office):
    spec = fuzzed_office.client.get("/openapi.json").json()
    assert spec["paths"]["/api/v1/claims"]["post"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ClaimDocument"}
    assert "ClaimDocument" in spec["components"]["schemas"]


@pytest.mark.parametrize("user", ["demo-preparer", "demo-examiner", "demo-auditor"])
def test_no_server_errors(fuzzed_office, user):
    service, engine, sent = _fuzz(fuzzed_office, user)
    assert sent > 100
    assert service == []
    assert engine == [], "server errors raised inside the core engine"


@pytest.mark.parametrize("database", DATABASES)
def test_the_documented_example_claim_is_accepted(database, tmp_path):
    """The schema's example claim is filed as documented, on an office the fuzzer has not
    touched (the fuzzer tries the example first and then amends what it stored, so after it the
    same taxpayer may hold another credit period: E4, or the claim itself: 409)."""
    with fresh_database(database, tmp_path) as url:
        office = make_office(url)
        seeded = seed(office.db)
        office.tokens.update({f"demo-{k}": v for k, v in seeded.tokens.items()})
        with office.client:
            spec = office.client.get("/openapi.json").json()
            example = spec["paths"]["/api/v1/claims"]["post"]["requestBody"]["content"]["application/json"]["example"]
            r = office.client.post("/api/v1/claims", json=example, headers=office.auth("demo-preparer"))
        office.db.dispose()
    assert r.status_code == 201, r.text
    assert r.json()["determination"]["eligible"] is True
