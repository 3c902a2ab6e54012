"""B1 (issue 18): ``compute --json`` writes each determination's text with its employee-months
made in one columnar pass (``determination.employee_month_jsons``); that text must be the very
``json.dumps`` of ``Determination.to_dict``, whether or not an employee id needs JSON escapes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from qmcredit.core import decide_many
from qmcredit.loaders import load_claim

from .conftest import EXAMPLES

IDS = {"plain": None, "escaped": 'Zoë "the baker" \\ 1\t\u0001', "non-ascii": "Zoë Ñúñez 1"}


def test_B1_compute_json_text_is_the_dumped_determination(tmp_path):
    paths = []
    for name, emp_id in IDS.items():
        doc = json.loads((EXAMPLES / "03-part-time-equivalents.claim.json").read_text())
        if emp_id is not None:
            doc["employees"][0]["id"] = emp_id
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc), "utf-8")
        paths.append(path)
    ran = subprocess.run([str(Path(sys.executable).parent / "qmcredit"), "compute", "--json", *paths], capture_output=True, text=True, encoding="utf-8")
    assert ran.returncode == 0, ran.stderr
    for path, line in zip(paths, ran.stdout.splitlines()):
        det = decide_many([load_claim(path)])[0]
        assert line == json.dumps(det.to_dict(), ensure_ascii=False), path.name
        assert line == json.dumps(json.loads(line), ensure_ascii=False)
