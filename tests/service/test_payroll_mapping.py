"""Issue 13 through the API: a payroll export sent with its column mapping (multipart field
``mapping``) decides as the embedded claim; the mapping is kept beside the payroll, so the
stored claim is decided the same way again (Form 313 figures)."""

from __future__ import annotations

import json

from .conftest import example


def test_an_export_with_its_mapping(office):
    doc = json.loads(example("03"))
    lines = ['"Worker","Per","Wrk","Kind"']
    lines += [f'"{e["id"]}","{m[5:]}/{m[:4]}","{h}","{"FT" if e["basis"] == "permanent" else "Seasonal"}"'
              for e in doc.pop("employees") for m, h in e["hours"].items()]
    doc["payroll"] = "export.csv"
    doc["taxpayer"]["id"] = "22-9000003"  # another taxpayer's claim: the same one twice is refused (409, issue 12)
    mapping = json.dumps({"columns": {"employee_id": "Worker", "month": "Per", "hours": "Wrk", "basis": "Kind"}})
    auth = office.auth("preparer")
    embedded = office.client.post("/api/v1/claims", content=example("03"), headers=auth).json()
    content = ("\n".join(lines) + "\n").encode()
    refused = office.client.post("/api/v1/claims", data={"claim": json.dumps(doc)}, files={"payroll": ("export.csv", content)}, headers=auth)
    assert refused.status_code == 422 and "no header row naming the payroll's columns" in refused.text
    r = office.client.post("/api/v1/claims", data={"claim": json.dumps(doc), "mapping": mapping},
                           files={"payroll": ("export.csv", content)}, headers=auth)
    assert r.status_code == 201, r.text
    assert r.json()["determination"]["credit"] == embedded["determination"]["credit"]
    forms = office.client.get(f"/api/v1/claims/{r.json()['id']}/form313", headers=auth)
    assert forms.status_code == 200, forms.text
    bad = office.client.post("/api/v1/claims", data={"claim": json.dumps(doc), "mapping": '{"columns": {"hourz": "Wrk"}}'},
                             files={"payroll": ("export.csv", content)}, headers=auth)
    assert bad.status_code == 422 and "mapping.columns.hourz" in bad.text


def test_excels_unicode_text_through_the_api(office):
    """Excel's "Unicode Text" export (UTF-16 with its byte-order mark, tab-separated, a .txt
    name) sent as the payroll decides as the embedded claim; before, a .txt was refused by name
    and UTF-16 was read as code page 1252."""
    doc = json.loads(example("03"))
    lines = ["Employee ID\tMonth\tHours\tStatus"]
    lines += [f'{e["id"]}\t{m}\t{h}\t{e["basis"]}' for e in doc.pop("employees") for m, h in e["hours"].items()]
    doc["payroll"] = "export.txt"
    doc["taxpayer"]["id"] = "22-9000013"  # a taxpayer of its own: the same claim twice is refused (409, issue 12)
    auth = office.auth("preparer")
    embedded = office.client.post("/api/v1/claims", content=example("03").replace(b"\"22-", b"\"22-1", 1), headers=auth).json()
    content = b"\xff\xfe" + ("\r\n".join(lines) + "\r\n").encode("utf-16-le")
    r = office.client.post("/api/v1/claims", data={"claim": json.dumps(doc)}, files={"payroll": ("export.txt", content)}, headers=auth)
    assert r.status_code == 201, r.text
    assert r.json()["determination"]["credit"] == embedded["determination"]["credit"]
