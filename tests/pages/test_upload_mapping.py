"""Issue 13 on the upload page: a payroll export's columns shown as read, a choice per column,
the file read again with the choice, and the choice remembered for the taxpayer."""

from __future__ import annotations

import html
import re

from .conftest import csrf, example_payroll, header_fields, sign_in


def _export(good: str) -> str:
    """The example's monthly CSV as an export writes it: other headers, months as MM/YYYY, and a
    column ("Wrk") that no guess reads as hours."""
    rows = [line.split(",") for line in good.strip().splitlines()[1:]]
    out = ['"Employee ID","Pay Period","Wrk","Emp Type"']
    out += [f'"{e}","{m[5:]}/{m[:4]}","{h}","{"FT" if b == "permanent" else "Seasonal"}"' for e, m, h, b in rows]
    return "\n".join(out) + "\n"


def _hidden(page: str) -> dict:
    return {k: html.unescape(v) for k, v in re.findall(r'<input type="hidden" name="(\w+)" value="([^"]*)"', page)}


def test_columns_chosen_on_the_preview_and_remembered(client, office):
    sign_in(client, "preparer")
    doc, good = example_payroll()
    page = client.get("/claims/new").text
    r = client.post("/claims/new", data={"csrf": csrf(page), **header_fields(doc)},
                    files={"payroll": ("export.csv", _export(good), "text/csv")})
    assert r.status_code == 422 and "How the columns were read" in r.text and "missing column(s) hours" in r.text
    assert '<option value="month" selected>' in r.text and "MM/YYYY" in r.text
    names = dict(re.findall(r'name="colname-(\d+)" value="([^"]*)"', r.text))
    choice = {f"colname-{i}": h for i, h in names.items()}
    choice |= {f"col-{i}": {"Employee ID": "employee_id", "Pay Period": "month", "Wrk": "hours", "Emp Type": "basis"}[h] for i, h in names.items()}
    hidden = _hidden(r.text)
    r = client.post("/claims/new", data={"csrf": csrf(page), **header_fields(doc), **choice,
                                         **{k: hidden[k] for k in ("payroll_b64", "payroll_name", "payroll_type")}})
    assert r.status_code == 200 and "No problems" in r.text, r.text[-3000:]
    r = client.post("/claims/new/confirm", data={**_hidden(r.text), "action": "draft"})
    assert r.status_code == 200 and "/claims/" in str(r.url)
    again = client.post("/claims/new", data={"csrf": csrf(page), **header_fields(doc)},
                        files={"payroll": ("export.csv", _export(good), "text/csv")})
    assert again.status_code == 200 and "No problems" in again.text  # the taxpayer's mapping, remembered
