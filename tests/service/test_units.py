"""The service's pure pieces: exact JSON, the workflow table, figure paths, ledger rows."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from qmcredit.service import exact_json, workflow
from qmcredit.service.errors import ApiError
from qmcredit.service.evidence import resolves
from qmcredit.service.ledger import entries
from qmcredit.service.models import Cents

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text()
    | st.decimals(allow_nan=False, allow_infinity=False, places=None).filter(lambda d: d == d),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_exact_json_round_trips_every_digit(value):
    text = exact_json.dumps(value)
    again = exact_json.loads(text)
    assert exact_json.dumps(again) == text


def test_exact_json_never_writes_a_binary_float():
    assert exact_json.dumps({"a": Decimal("0.10"), "b": [Decimal("1E+3"), 7]}) == '{"a":0.10,"b":[1E+3,7]}'
    with pytest.raises(TypeError):
        exact_json.dumps(0.1)
    with pytest.raises(ValueError):
        exact_json.loads("NaN")


@pytest.mark.parametrize("state, action, role, expected", [
    ("draft", "submit", "preparer", "submitted"),
    ("submitted", "start_review", "examiner", "under_review"),
    ("under_review", "deny", "examiner", "denied"),
    ("adjusted", "certify_refund", "examiner", "refund_certified"),
])
def test_workflow_steps(state, action, role, expected):
    assert workflow.next_state(state, action, role) == expected


@pytest.mark.parametrize("state, action, role, status", [
    ("draft", "start_review", "examiner", 409),
    ("submitted", "start_review", "preparer", 403),
    ("under_review", "approve", "auditor", 403),
    ("denied", "certify_refund", "examiner", 409),
    ("refund_certified", "approve", "examiner", 409),
])
def test_workflow_refusals(state, action, role, status):
    with pytest.raises(ApiError) as err:
        workflow.next_state(state, action, role)
    assert err.value.status == status


def test_amendments_by_state_and_role():
    assert workflow.state_after_amendment("approved", "preparer") == "submitted"
    assert workflow.state_after_amendment("under_review", "examiner") == "under_review"
    for state, role in (("under_review", "preparer"), ("submitted", "examiner"), ("draft", "auditor")):
        with pytest.raises(ApiError):
            workflow.state_after_amendment(state, role)


def test_figure_paths():
    det = {"credit": {"year_one": "1.00"}, "periods": [{"applied": "0.00"}, {"applied": "2.00"}]}
    assert resolves("credit.year_one", det) and resolves("periods[1].applied", det)
    assert not resolves("periods[2].applied", det) and not resolves("credit.year_three", det) and not resolves("", det)


def test_ledger_rows_by_year_of_origin():
    det = {"periods": [
        {"start": "2005-01-01", "end": "2005-12-31", "applied": "10.00",
         "detail": {"origins": {"year_one": {"allowed": "15.00", "applied": "10.00", "refund": "0.00",
                                             "forfeited": "0.00", "closing": "5.00", "opening": "0.00"}}}},
        {"start": "2006-01-01", "end": "2006-12-31", "applied": None, "detail": {"origins": {}}},
    ]}
    rows = entries(det)
    assert len(rows) == 1 and rows[0]["origin"] == "year_one" and rows[0]["carried_forward"] == Decimal("5.00")


def test_cents_are_whole():
    cents = Cents()
    assert cents.process_bind_param(Decimal("12.34"), None) == 1234
    assert cents.process_result_value(1234, None) == Decimal("12.34")
    with pytest.raises(ValueError):
        cents.process_bind_param(Decimal("0.001"), None)
