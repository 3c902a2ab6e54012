"""Issue 11: ``validate`` runs every check ``compute`` runs (valid for one <=> decided by the
other), ``compute --json`` prints one line per claim in order whatever stage refuses a claim, and
every problem on stderr is one ``FILE: LOCATION: MESSAGE`` line, never wrapped, even piped."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import base_claim, employee, months

EXE = Path(sys.executable).parent / "qmcredit"


def good() -> dict:
    return base_claim([employee("A", {m: 160 for m in months("2004-04", 24)}), employee("B", {m: 100 for m in months("2003-04", 36)})])


def edit(f):
    doc = good()
    f(doc)
    return doc


def setp(i, **kw):
    def f(doc):
        for k, v in kw.items():
            if v is None:
                doc["periods"][i].pop(k, None)
            else:
                doc["periods"][i][k] = v
    return f


LONG = "x" * 300
#: name -> the claim file's text (or a dict), each refused at some stage, or decided
CASES = {
    "good": good(),
    "good_derived_minimum_tax": edit(setp(1, minimum_tax=None, nj_gross_receipts="150000")),
    "good_json_int_options": json.dumps(good()).replace('"options": {}', '"options": {"carryforward_periods": 2, "equivalent_hours_cap": 140}'),
    "not_json": '{"format": "qmcredit.claim/1", ',
    "not_an_object": "[1, 2]",
    "missing_location": edit(lambda d: d.pop("location")),
    "unknown_field_long": edit(lambda d: d["taxpayer"].__setitem__("n" + LONG, 1)),
    "bad_flag": edit(lambda d: d["taxpayer"].__setitem__("uez_benefit", "maybe")),
    "bad_option_int": json.dumps(good()).replace('"options": {}', '"options": {"carryforward_periods": 2.5}'),
    "bad_money_ambiguous": edit(setp(0, liability="1,60")),
    "no_minimum_tax_every_period": edit(lambda d: [p.pop("minimum_tax") for p in d["periods"]]),
    "no_minimum_tax_and_bad_liability": edit(lambda d: (setp(0, minimum_tax=None)(d), setp(2, liability="abc")(d))),
    "ama_after_2006": edit(setp(3, alternative_minimum_assessment="10.00")),
    "period_too_long": edit(lambda d: (setp(0, end="2005-01-31")(d), setp(1, start="2005-02-01")(d))),
    "gap": edit(lambda d: d["periods"].pop(1)),
    "overlap": edit(setp(1, start="2004-12-01")),
    "group_conflict": edit(setp(0, minimum_tax=None, nj_gross_receipts="1", group_payroll="10.00", group_payroll_5m=True)),
    "no_schedule_year": edit(lambda d: (d["location"].__setitem__("operations_began", "2000-03-15"),
                                        d.__setitem__("periods", [{"start": "2001-01-01", "end": "2001-12-31", "liability": "100.00", "nj_gross_receipts": "5"}]))),
    "ambiguous_hours": edit(lambda d: d["employees"][0]["hours"].__setitem__("2004-05", "1,60")),
    "duplicate_employee": edit(lambda d: d["employees"].append(copy.deepcopy(d["employees"][0]))),
    "hours_too_many": edit(lambda d: d["employees"][0]["hours"].__setitem__("2004-02", "697")),
    "bad_month_long": edit(lambda d: d["employees"][0]["hours"].__setitem__("M" + LONG, "1")),
    "missing_payroll_table": edit(lambda d: (d.pop("employees"), d.__setitem__("payroll", "nowhere.csv"))),
    "bad_date": edit(lambda d: d["location"].__setitem__("operations_began", "2004-02-30")),
}
DECIDED = {"good", "good_derived_minimum_tax", "good_json_int_options"}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> list[Path]:
    folder = tmp_path_factory.mktemp("claims")
    out = []
    for name, doc in CASES.items():
        path = folder / f"{name}.json"
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
        out.append(path)
    return out


def run(*args):
    # piped, and a narrow terminal width in the environment: nothing may wrap at it
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, timeout=300, env={**os.environ, "COLUMNS": "60"})


def test_validate_and_compute_agree_on_every_claim(files):
    v = run("validate", *files)
    c = run("compute", "--json", "--no-explain", *files)
    assert v.returncode == c.returncode == 1
    valid = {Path(line.split(": valid: ")[0]).stem for line in v.stdout.splitlines() if ": valid: " in line}
    lines = [json.loads(x) for x in c.stdout.splitlines()]
    assert len(lines) == len(files)  # one line per claim, in order, whatever stage refused it
    decided = set()
    for path, line in zip(files, lines):
        if "error" in line:
            assert line["claim"] == str(path) and line["problems"], line
        else:
            decided.add(path.stem)
    assert valid == decided == DECIDED


def test_every_problem_is_one_unwrapped_line(files):
    for r in (run("validate", *files), run("compute", "--json", *files), run("compute", *files)):
        assert "Traceback" not in r.stderr
        for line in r.stderr.splitlines():
            assert any(line.startswith(f"{p}: ") for p in files), line  # a continuation line would not start with a file
    r = run("validate", *files)
    long = [line for line in r.stderr.splitlines() if LONG in line]
    assert len(long) == 2 and all(len(line) > 300 for line in long)


def test_every_problem_at_once_across_stages(files):
    r = run("validate", next(p for p in files if p.stem == "no_minimum_tax_and_bad_liability"))
    locations = [line.split(": ")[1] for line in r.stderr.splitlines() if ": invalid: " not in line]
    assert "periods[0].minimum_tax" in locations and "periods[2].liability" in locations
    r = run("validate", next(p for p in files if p.stem == "no_minimum_tax_every_period"))
    assert [f"periods[{i}].minimum_tax" for i in range(4)] == [line.split(": ")[1] for line in r.stderr.splitlines() if ": invalid: " not in line]


def test_worksheet_title_is_not_cut_when_piped(tmp_path):
    doc = good()
    doc["location"]["address"] = "A very long address of a site on the waterfront, " * 3
    path = tmp_path / "c.json"
    path.write_text(json.dumps(doc))
    r = run("compute", path)
    assert r.returncode == 0, r.stderr
    assert doc["location"]["address"].strip() in r.stdout


def test_a_claim_refused_after_loading_takes_no_other_claim_down():
    """A header built without the loaders' checks (the Python API) and refused by ``core.prepare``
    still leaves the other claims decided: ``compute`` gives its error in its place."""
    import qmcredit
    from qmcredit.claim import Claim, ClaimHeader
    from qmcredit.decided_files import decided

    ok = qmcredit.claim_from_json(json.dumps(good()))
    doc = good()
    del doc["periods"][0]["minimum_tax"]
    raw = Claim(ClaimHeader.model_validate({k: v for k, v in doc.items() if k != "employees"}), ok.payroll)
    out = decided([ok, raw, ok])
    assert isinstance(out[1], qmcredit.ClaimError) and out[1].problems[0].location == "periods[0].minimum_tax"
    assert out[0].to_dict(explain=False) == out[2].to_dict(explain=False) == qmcredit.decide(ok).to_dict(explain=False)
