"""The HTML report opens offline in headless Chromium (the network shut off by a dead proxy) and
its charts are drawn: the scenarios' bar colours are on the page."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from qmcredit.analysis.report import COLOURS

from .conftest import qmcredit

pytestmark = pytest.mark.browser


def _chromium() -> str:
    found = os.environ.get("QMCREDIT_CHROMIUM") or shutil.which("chromium")
    if not found:
        pytest.skip("chromium is not installed (Debian: chromium)")
    return found


def test_the_report_renders_offline_with_its_charts(data, tmp_path):
    from PIL import Image

    exe = _chromium()
    out = tmp_path / "cost"
    qmcredit("cost", str(data / "batch"), "--claims", str(data / "in/claims.parquet"), "--out", str(out))
    shot = tmp_path / "report.png"
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--proxy-server=127.0.0.1:9", "--window-size=1200,2400",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}", (out / "report.html").as_uri()],
                   check=True, capture_output=True, timeout=120)
    image = Image.open(shot).convert("RGB")
    bar = tuple(int(COLOURS[0][k:k + 2], 16) for k in (1, 3, 5))
    colours = {c for _, c in image.getcolors(maxcolors=1 << 20)}
    assert bar in colours  # the baseline's bars are drawn
