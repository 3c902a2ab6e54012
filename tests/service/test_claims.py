"""Filing and reading claims: the API gives the CLI's determination, exactly."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import qmcredit

from .conftest import EXAMPLES, example, variant


ONE_LOCATION = [p for p in sorted(EXAMPLES.glob("*.claim.json")) if '"locations"' not in p.read_text()]


# several-location examples (07) are filed one claim per location: tests/service/test_ledger_return.py
@pytest.mark.parametrize("path", ONE_LOCATION, ids=lambda p: p.name[:2])
def test_posted_claim_gets_the_cli_determination(office, path):
    table = json.loads(path.read_bytes()).get("payroll")
    if table:  # an example with its payroll table beside it: uploaded with it
        r = office.client.post("/api/v1/claims?explain=true", data={"claim": path.read_text()},
                               files={"payroll": (table, (path.parent / table).read_bytes())}, headers=office.auth("preparer"))
    else:
        r = office.client.post("/api/v1/claims?explain=true", content=path.read_bytes(),
                               headers={**office.auth("preparer"), "content-type": "application/json"})
    assert r.status_code == 201, r.text
    posted = r.json()
    # what `qmcredit compute --json` prints for the file: det.to_json() of the loaded claim
    expected = json.loads(qmcredit.decide(qmcredit.load_claim(path)).to_json())
    got = dict(posted["determination"])
    for det in (got, expected):
        det.pop("claim_id", None)  # the CLI names the file, the service the upload
    assert got == expected
    again = office.client.get(f"/api/v1/claims/{posted['id']}?explain=true", headers=office.auth("preparer"))
    assert again.status_code == 200
    assert again.json() == posted


@pytest.mark.parametrize("path", [p for p in ONE_LOCATION if not json.loads(p.read_bytes()).get("payroll")], ids=lambda p: p.name[:2])
def test_stored_determination_is_the_dict_paths_text_and_answers_agree(office, path):
    """The office writes the determination column-wise (``Determination.to_json``) and answers from
    its figures without the trace: the text stored is, byte for byte, ``json.dumps`` of the whole
    ``to_dict``, and the answer without the trace is that less its ``explanation`` (B1)."""
    from sqlalchemy import select

    from qmcredit.service.models import Revision

    r = office.client.post("/api/v1/claims", content=path.read_bytes(), headers={**office.auth("preparer"), "content-type": "application/json"})
    assert r.status_code == 201, r.text
    whole = qmcredit.decide(qmcredit.claim_from_json(path.read_bytes(), source="upload")).to_dict()
    with office.db.read() as session:
        stored = session.execute(select(Revision.determination).where(Revision.claim_id == r.json()["id"])).scalar_one()
    assert stored == json.dumps(whole, ensure_ascii=False)
    assert r.json()["determination"] == json.loads(json.dumps({k: v for k, v in whole.items() if k != "explanation"}))


def test_a_claim_of_several_locations_is_refused_naming_locations(office):
    """L6: the office files one location per claim (its return is the taxpayer's claims)."""
    path = next(EXAMPLES.glob("07*.claim.json"))
    r = office.client.post("/api/v1/claims", content=path.read_bytes(), headers={**office.auth("preparer"), "content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert "locations" in r.text and "one location per claim" in r.text


def test_same_determination_as_the_cli_process(office):
    path = next(EXAMPLES.glob("01*.claim.json"))
    cli = subprocess.run([str(Path(sys.executable).with_name("qmcredit")), "compute", "--json", str(path)],
                         capture_output=True, text=True, check=True)
    expected = json.loads(cli.stdout.splitlines()[0])
    got = office.client.post("/api/v1/claims?explain=true", content=path.read_bytes(), headers=office.auth("preparer")).json()
    det = dict(got["determination"])
    det.pop("claim_id"), expected.pop("claim_id", None)
    assert det == expected


def test_expected_figures_of_the_shared_example(office):
    r = office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer"))
    det = r.json()["determination"]
    want = json.loads(next(EXAMPLES.glob("01*.expected.json")).read_text())
    assert det["credit"] == want["credit"] and det["carried_forward"] == want["carried_forward"]
    assert "explanation" not in det  # only with ?explain=true
    full = office.client.get(f"/api/v1/claims/{r.json()['id']}/determination", headers=office.auth("preparer")).json()
    assert full["explanation"]


def test_payroll_uploads_in_every_format_agree(office, tmp_path):
    import polars as pl

    doc = json.loads(example("03"))
    rows = [{"employee_id": e["id"], "month": m, "hours": str(h), "basis": e.get("basis", "permanent"),
             "ownership_interest": str(e.get("ownership_interest", False)).lower(), "owner_relation": e.get("owner_relation")}
            for e in doc.pop("employees") for m, h in e["hours"].items()]
    doc["payroll"] = "payroll"
    header = json.dumps(doc)
    df = pl.DataFrame(rows, schema={k: pl.Utf8 for k in rows[0]})
    files = {
        "payroll.csv": df.write_csv().encode(),
        "payroll.json": json.dumps(rows).encode(),
    }
    df.write_parquet(tmp_path / "p.parquet")
    files["payroll.parquet"] = (tmp_path / "p.parquet").read_bytes()
    files["payroll.xlsx"] = _xlsx(rows, tmp_path / "p.xlsx")
    # each filing under its own taxpayer (a refiling would be refused, 409); the last under example 03's
    embedded = office.client.post("/api/v1/claims", content=variant("03", ein="22-9000099"), headers=office.auth("preparer")).json()
    for i, (name, content) in enumerate(files.items()):
        header = json.dumps(doc | {"taxpayer": doc["taxpayer"] | {"id": f"22-90000{i:02d}"}}) if i < len(files) - 1 else json.dumps(doc)
        r = office.client.post("/api/v1/claims", data={"claim": header}, files={"payroll": (name, content)},
                               headers=office.auth("preparer"))
        assert r.status_code == 201, (name, r.text)
        got = r.json()["determination"]
        for key in ("average_positions", "new_positions", "credit", "periods", "refund", "carried_forward"):
            assert got[key] == embedded["determination"][key], (name, key)
        docs = office.client.get(f"/api/v1/claims/{r.json()['id']}/documents", headers=office.auth("preparer")).json()
        assert docs[0]["kind"] == "payroll_table" and docs[0]["filename"] == name
    # amending the header keeps the uploaded table; amending with embedded employees drops it
    cid = r.json()["id"]
    kept = office.client.put(f"/api/v1/claims/{cid}", content=header, headers=office.auth("preparer"))
    assert kept.status_code == 200, kept.text
    assert kept.json()["determination"]["credit"] == embedded["determination"]["credit"]
    replaced = office.client.put(f"/api/v1/claims/{cid}", content=example("03"), headers=office.auth("preparer"))
    assert replaced.status_code == 200, replaced.text
    revs = office.client.get(f"/api/v1/claims/{cid}/revisions", headers=office.auth("preparer")).json()
    assert [v["payroll_document_id"] is not None for v in revs] == [True, True, False]


def test_a_claim_naming_a_table_needs_the_upload(office):
    doc = json.loads(example("03"))
    doc.pop("employees")
    doc["payroll"] = "/etc/passwd"
    r = office.client.post("/api/v1/claims", content=json.dumps(doc), headers=office.auth("preparer"))
    assert r.status_code == 422
    assert r.json()["problems"][0]["location"] == "payroll"


def test_form313_figures_per_period(office):
    claim = office.client.post("/api/v1/claims", content=example("01"), headers=office.auth("preparer")).json()
    forms = office.client.get(f"/api/v1/claims/{claim['id']}/form313", headers=office.auth("preparer"))
    assert forms.status_code == 200, forms.text
    assert len(forms.json()) == len(claim["determination"]["periods"])
    one = office.client.get(f"/api/v1/claims/{claim['id']}/form313/2005-01-01", headers=office.auth("preparer"))
    assert one.status_code == 200 and one.json() == forms.json()[1]
    missing = office.client.get(f"/api/v1/claims/{claim['id']}/form313/2001-01-01", headers=office.auth("preparer"))
    assert missing.status_code == 404 and missing.json()["problems"][0]["location"] == "period_start"


def _xlsx(rows: list[dict], path) -> bytes:
    from openpyxl import Workbook

    wb = Workbook()
    ws = wb.active
    ws.append(list(rows[0]))
    for row in rows:
        ws.append(list(row.values()))
    wb.save(path)
    return path.read_bytes()


@pytest.mark.parametrize("submit", [False, True])
def test_the_filings_answer_is_the_claim_as_stored(office, submit):
    """A filing writes its rows without the ORM's unit of work (``claims._insert``): its answer,
    made from the rows as written, is what reading the stored claim gives, defaults included."""
    r = office.client.post(f"/api/v1/claims?explain=true&submit={str(submit).lower()}", content=example("01"),
                           headers={**office.auth("preparer"), "content-type": "application/json"})
    assert r.status_code == 201, r.text
    filed = r.json()
    stored = office.client.get(f"/api/v1/claims/{filed['id']}?explain=true", headers=office.auth("preparer"))
    assert stored.status_code == 200, stored.text
    assert filed == stored.json()
    assert filed["state"] == ("submitted" if submit else "draft") and filed["revision"] == 1
    taxpayer = office.client.get(f"/api/v1/taxpayers/{filed['taxpayer_id']}", headers=office.auth("preparer")).json()
    assert taxpayer["ein"] == filed["taxpayer_ein"]
