"""A small generated set (``qmcredit synth``) decided by ``qmcredit batch``, both run as commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CLAIMS = 300
SEED = 5
EXE = Path(sys.executable).parent / "qmcredit"


def qmcredit(*args: str) -> subprocess.CompletedProcess:
    """Run the command line as a user does; fail the test with its stderr if it fails."""
    done = subprocess.run([str(EXE), *args], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="session")
def data(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("analysis")
    qmcredit("synth", "--out", str(root / "in"), "--claims", str(CLAIMS), "--seed", str(SEED))
    qmcredit("batch", str(root / "in/claims.parquet"), str(root / "in/payroll.parquet"), "--periods", str(root / "in/periods.parquet"),
             "--out", str(root / "batch"))
    return root
