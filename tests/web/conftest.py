"""Fixtures for the web pieces: decided shared examples, and the poppler / chromium binaries
(skipped with a reason when missing, failed when QMCREDIT_REQUIRE_SERVICES=1, as in CI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest

import qmcredit

from ..conftest import EXAMPLES


@cache
def decided(name: str):
    claim = qmcredit.load_claim(EXAMPLES / f"{name}.claim.json")
    return claim, qmcredit.decide(claim)


def pending_claim():
    """Example 01 as of 2005-06-30: the last nine months of credit year two are not known yet."""
    doc = json.loads((EXAMPLES / "01-expansion-cap-carryforward.claim.json").read_text())
    doc["as_of"] = "2005-06-30"
    for e in doc["employees"]:
        e["hours"] = {m: h for m, h in e["hours"].items() if m <= "2005-06"}
    claim = qmcredit.claim_from_dict(doc)
    return claim, qmcredit.decide(claim)


def binary(name: str) -> str:
    found = os.environ.get("QMCREDIT_CHROMIUM") if name == "chromium" else None
    found = found or shutil.which(name)
    if found:
        return found
    if os.environ.get("QMCREDIT_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{name} is required (QMCREDIT_REQUIRE_SERVICES=1) but not installed")
    pytest.skip(f"{name} is not installed (Debian: {'chromium' if name == 'chromium' else 'poppler-utils'})")


def pdf_text(pdf: bytes, tmp_path: Path) -> str:
    """The PDF's text as ``pdftotext -layout`` extracts it."""
    exe = binary("pdftotext")
    src = tmp_path / "in.pdf"
    src.write_bytes(pdf)
    return subprocess.run([exe, "-layout", str(src), "-"], check=True, capture_output=True, text=True, timeout=60).stdout


def has_figure(text: str, figure: str) -> bool:
    """``figure`` appears as a whole number in ``text`` (so "0.00" does not match inside "10000.00")."""
    return re.search(rf"(?<![\d.]){re.escape(figure)}(?!\.?\d)", text) is not None
