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


def test_out_a_folder_is_refused_and_files_get_the_usual_permissions(tmp_path):
    """Through the command itself, under umask 022: ``--out`` naming a folder is refused (exit 2,
    naming a file to give; it was an internal error, exit 3), and the form, the worksheet and
    ``compute --trace``'s Parquet file are readable by others as any new file is (they were
    written through a private temporary file and kept its 0600)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    exe = str(Path(sys.executable).parent / "qmcredit")
    umask = lambda: os.umask(0o022)  # noqa: E731
    r = subprocess.run([exe, "form313", CLAIM, "--period", "2005", "--out", str(tmp_path)], capture_output=True, text=True, timeout=120, preexec_fn=umask)
    assert (r.returncode, r.stderr) == (2, f"--out: {str(tmp_path)!r} is a folder; give the file to write in it, e.g. --out {tmp_path / 'form313.pdf'}\n")
    assert list(tmp_path.iterdir()) == []
    r = subprocess.run([exe, "form313", CLAIM, "--period", "2005", "--out", str(tmp_path / "no" / "f.pdf")], capture_output=True, text=True, timeout=120)
    assert (r.returncode, r.stderr) == (2, f"--out: the folder {str(tmp_path / 'no')!r} does not exist\n")
    out = tmp_path / "form.pdf"
    assert subprocess.run([exe, "form313", CLAIM, "--period", "2005", "--out", str(out), "--worksheet"], capture_output=True, timeout=120,
                          preexec_fn=umask).returncode == 0
    assert subprocess.run([exe, "compute", "--json", "--trace", str(tmp_path / "trace.parquet"), CLAIM], capture_output=True, timeout=120,
                          preexec_fn=umask).returncode == 0
    modes = {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()}
    assert modes == {"form.pdf": 0o644, "form.worksheet.pdf": 0o644, "trace.parquet": 0o644}
