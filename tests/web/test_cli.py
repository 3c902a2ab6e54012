"""``qmcredit form313``: writes the PDF atomically; clear errors and exit codes on bad input."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from qmcredit.web.cli import form313, write_atomically

from ..conftest import EXAMPLES

CLAIM = str(EXAMPLES / "01-expansion-cap-carryforward.claim.json")


def run(*args: str):
    app = typer.Typer()
    app.command()(form313)
    return CliRunner().invoke(app, list(args))


def test_writes_form_and_worksheet(tmp_path):
    out = tmp_path / "form313-2005.pdf"
    r = run(CLAIM, "--period", "2005", "--out", str(out), "--worksheet")
    assert r.exit_code == 0, r.output
    assert out.read_bytes().startswith(b"%PDF")
    assert (tmp_path / "form313-2005.worksheet.pdf").read_bytes().startswith(b"%PDF")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["form313-2005.pdf", "form313-2005.worksheet.pdf"]  # no temp files left


def test_unknown_period_lists_periods_and_writes_nothing(tmp_path):
    out = tmp_path / "f.pdf"
    r = run(CLAIM, "--period", "1999", "--out", str(out))
    assert r.exit_code == 2
    assert "no privilege period ends in '1999'" in r.output and "2004-01-01 to 2004-12-31" in r.output
    assert not out.exists()


def test_invalid_claim_exits_1_and_keeps_the_old_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "qmcredit.claim/1"}')
    out = tmp_path / "f.pdf"
    out.write_bytes(b"old")
    r = run(str(bad), "--period", "2005", "--out", str(out))
    assert r.exit_code == 1
    assert str(bad) in r.output
    assert out.read_bytes() == b"old"


def test_missing_claim_is_one_line(tmp_path):
    r = run(str(tmp_path / "none.json"), "--period", "2005", "--out", str(tmp_path / "f.pdf"))
    assert r.exit_code == 1
    assert r.output.strip() == f"{tmp_path / 'none.json'}: no such file"


def test_atomic_write_leaves_no_temp_file_on_failure(tmp_path):
    target = tmp_path / "x.pdf"
    write_atomically(target, b"%PDF-1")
    assert target.read_bytes() == b"%PDF-1"
    with pytest.raises(TypeError):
        write_atomically(target, None)  # type: ignore[arg-type]  # the write fails midway
    assert target.read_bytes() == b"%PDF-1"
    assert [p.name for p in tmp_path.iterdir()] == ["x.pdf"]
