"""Start-up: the package's API loads on first use, so that ``qmcredit batch`` reads its payroll
table while the rules' modules (pydantic and the claim models, the core) are imported."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import types
from pathlib import Path

import polars as pl
import pytest
import typer

import qmcredit

_WIDE = {**os.environ, "COLUMNS": "100", "TERM": "dumb"}  # one width for both help texts compared
HEAVY = ("pydantic", "qmcredit.claim", "qmcredit.core", "qmcredit.batch.partition", "rich", "qmcredit.loaders", "pyarrow")


def loaded_after(statement: str) -> list[str]:
    """The modules of ``HEAVY`` that a fresh interpreter has loaded after ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def test_the_command_line_and_the_batch_planner_load_no_rules():
    assert loaded_after("import qmcredit.cli") == []
    assert loaded_after("import qmcredit.batch.engine") == []


#: What ``qmcredit compute --json`` of one claim never needs: the other shells' libraries (DuckDB,
#: reportlab, the office's FastAPI and SQLAlchemy, Dask) and modules, the worksheet's rich, and the
#: export readers (a claim of embedded employees reads no table).
NOT_FOR_COMPUTE = ("duckdb", "reportlab", "fastapi", "sqlalchemy", "dask", "openpyxl", "rich", "qmcredit.imports.table",
                   "qmcredit.imports.periods", "qmcredit.batch", "qmcredit.service", "qmcredit.web", "qmcredit.analysis", "qmcredit.worksheet")


def test_compute_of_one_claim_imports_no_other_shell():
    """Start-up (issue 18): ``qmcredit compute --json`` run as the command line runs it imports
    none of ``NOT_FOR_COMPUTE``; the other commands still run (their modules load by name)."""
    claim = Path(__file__).parents[1] / "examples" / "01-expansion-cap-carryforward.claim.json"
    code = (f"import json, sys\nsys.argv = ['qmcredit', 'compute', '--json', {str(claim)!r}]\nfrom qmcredit.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(json.dumps([m for m in sys.modules if m.split('.')[0] in {NOT_FOR_COMPUTE!r} or m.startswith({NOT_FOR_COMPUTE!r})]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    *determination, loaded = out.stdout.strip().splitlines()
    assert json.loads(determination[0])["format"] == "qmcredit.determination/1"
    assert json.loads(loaded) == []
    exe = str(Path(sys.executable).parent / "qmcredit")
    shown = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    assert all(name in shown for name in ("compute", "batch", "synth", "serve", "form313", "cost", "reform", "audit"))
    verify = subprocess.run([exe, "audit", "verify", "--help"], capture_output=True, text=True)
    assert verify.returncode == 0 and "hash chain" in verify.stdout


def test_help_lists_the_other_shells_without_importing_them():
    """Start-up (issue 18): ``qmcredit --help`` lists every command, the other shells by the
    summaries of ``cli.SHELLS``, importing none of their modules, polars or pydantic (rich
    draws the help); the text is the one shown when every shell is loaded to be listed."""
    heavy = (*(m for m in NOT_FOR_COMPUTE if m != "rich"), "polars", "pydantic", "qmcredit.claim", "qmcredit.loaders")
    code = ("import json, sys\nsys.argv = ['qmcredit', '--help']\nfrom qmcredit.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            f"print(json.dumps([m for m in sys.modules if m.split('.')[0] in {heavy!r} or m.startswith({heavy!r})]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=_WIDE)
    *shown, loaded = out.stdout.rstrip("\n").split("\n")
    assert json.loads(loaded) == []
    every_shell_loaded = ("import sys\nsys.argv = ['qmcredit', '--help']\nfrom qmcredit import cli\nlisted = cli._Shells.get_command\n"
                          "def loaded(self, ctx, name):\n    if name in cli.SHELLS and name not in self.commands:\n        self._load(name)\n"
                          "    return listed(self, ctx, name)\ncli._Shells.get_command = loaded\n"
                          "try:\n    cli.main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n")
    loaded_help = subprocess.run([sys.executable, "-c", every_shell_loaded], capture_output=True, text=True, check=True, env=_WIDE).stdout
    assert "\n".join(shown) + "\n" == loaded_help
    from qmcredit.cli import SHELLS, _Shells, app

    group = typer.main.get_command(app)
    assert isinstance(group, _Shells)
    for name, (_, _, summary) in SHELLS.items():
        group._load(name)
        assert inspect.cleandoc(group.commands[name].help).split("\n\n")[0] == summary, name


def test_the_batch_takes_its_own_payroll_table_without_loading_the_rules(tmp_path):
    """Issue 12's regression: recognising the payroll table's own columns (``canonical_payroll``)
    must not import the export readers, the claim models or pyarrow before the read starts."""
    table = tmp_path / "payroll.parquet"
    pl.DataFrame({"claim_id": ["C1"], "employee_id": ["E1"], "month": ["2004-01"], "hours": ["160"]}).write_parquet(table)
    statement = (f"from pathlib import Path\nfrom qmcredit.batch.cli import canonical_payroll\n"
                 f"assert canonical_payroll(Path({str(table)!r}), None, None, Path({str(tmp_path)!r}), 'run') == (Path({str(table)!r}), None)")
    assert loaded_after(statement) == []


def test_a_name_of_the_api_loads_its_module():
    assert loaded_after("from qmcredit import ClaimError") == []  # problems.py needs nothing heavy
    assert {"pydantic", "qmcredit.claim", "qmcredit.core"} <= set(loaded_after("from qmcredit import decide"))


def test_the_api_names_are_what_they_were():
    from qmcredit.claim import Claim
    from qmcredit.core import decide, decide_many
    from qmcredit.loaders import load_claim
    from qmcredit.problems import ClaimError

    assert qmcredit.decide is decide and qmcredit.decide_many is decide_many
    assert not isinstance(qmcredit.decide, types.ModuleType)  # the core is qmcredit.core; decide stays the function
    assert (qmcredit.Claim, qmcredit.load_claim, qmcredit.ClaimError) == (Claim, load_claim, ClaimError)
    assert set(qmcredit.__all__) <= set(dir(qmcredit))
    namespace: dict = {}
    exec("from qmcredit import *", namespace)
    assert set(qmcredit.__all__) <= set(namespace)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'decides'"):
        qmcredit.decides  # noqa: B018


def test_the_switch_interval_is_restored_after_a_partition():
    from qmcredit.processes import prompt_handoffs

    before = sys.getswitchinterval()
    with prompt_handoffs():
        assert sys.getswitchinterval() < before
    assert sys.getswitchinterval() == before


def test_the_collector_is_paused_only_while_the_command_line_starts():
    """``main`` pauses the cyclic collector while the command line starts (its modules' objects
    are long-lived, no garbage) and the command runs with it again, those objects frozen; the
    command line's processes look for no pydantic plugin (a setting given stays)."""
    code = ("import gc, json, os, sys\nfrom qmcredit import cli\nseen = []\n"
            "@cli.app.command('probe')\ndef probe() -> None:\n"
            "    seen.append([gc.isenabled(), gc.get_freeze_count() > 0, os.environ.get('PYDANTIC_DISABLE_PLUGINS')])\n"
            "sys.argv = ['qmcredit', 'probe']\n"
            "try:\n    cli.main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(json.dumps(seen))")
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert json.loads(out.stdout) == [[True, True, "__all__"]]
    given = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**env, "PYDANTIC_DISABLE_PLUGINS": ""})
    assert json.loads(given.stdout) == [[True, True, ""]]
    no_command = ("import gc, sys\nfrom qmcredit import cli\nsys.argv = ['qmcredit', '--help']\n"
                  "try:\n    cli.main()\nexcept SystemExit as e:\n    assert not e.code, e.code\nprint(gc.isenabled(), file=sys.stderr)")
    shown = subprocess.run([sys.executable, "-c", no_command], capture_output=True, text=True, check=True, env=env)
    assert shown.stderr.strip() == "True"  # no command started: the collector as it was


def test_a_batch_of_text_tables_never_imports_pyarrow(tmp_path):
    """The engine imports pyarrow before a partition's read only when that read needs it (a
    Parquet table read as codes, ``tables.read_coded``): a CSV payroll table, however many rows,
    is read without it."""
    from qmcredit.batch import synth

    paths = synth.write(tmp_path / "in", 20, 1, kind="csv", invalid_share=0.0)
    statement = ("from pathlib import Path\nfrom qmcredit.batch import engine\nengine.CODES_FROM_ROWS = 0  # as if the table were large\n"
                 f"summary = engine.run(Path({str(paths['claims'])!r}), Path({str(paths['payroll'])!r}), Path({str(tmp_path / 'out')!r}), "
                 f"periods=Path({str(paths['periods'])!r}))\nassert summary.decided == 20, summary")
    assert "pyarrow" not in loaded_after(statement)


def test_the_command_script_imports_no_command_line_until_it_runs():
    """Issue 18: a local worker process (spawned) runs the command's script again as its main
    module without running the command; the script imports ``qmcredit.__main__``, which leaves the
    command line (typer and every command) to the command itself. ``python -m qmcredit`` is the
    same command."""
    code = "import json, sys\nimport qmcredit.__main__\nprint(json.dumps([m for m in ('typer', 'qmcredit.cli') if m in sys.modules]))"
    assert json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout) == []
    script = Path(sys.executable).parent / "qmcredit"
    assert "from qmcredit.__main__ import main" in script.read_text()
    shown = subprocess.run([sys.executable, "-m", "qmcredit", "--help"], capture_output=True, text=True, env=_WIDE)
    assert shown.returncode == 0 and "compute" in shown.stdout


def test_a_command_that_ends_at_once_flushes_its_output_and_keeps_its_exit_code():
    """``cli.ends_at_once`` (``compute``): the process ends without the interpreter's teardown,
    what the command wrote flushed first and its exit code kept (issue 18: 6-8 ms of one claim)."""
    code = ("import atexit, sys, typer\nfrom qmcredit import __main__, cli\n"
            "atexit.register(lambda: sys.stderr.write('teardown'))\n"
            "@cli.app.command('probe')\ndef probe(ends: bool = False) -> None:\n"
            "    cli.ends_at_once = ends\n    sys.stdout.write('written, not flushed')\n    raise typer.Exit(3)\n"
            "sys.argv = ['qmcredit', 'probe', *sys.argv[1:]]\n__main__.main()\n")
    at_once = subprocess.run([sys.executable, "-c", code, "--ends"], capture_output=True, text=True)
    assert (at_once.returncode, at_once.stdout, at_once.stderr) == (3, "written, not flushed", "")
    torn_down = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (torn_down.returncode, torn_down.stdout, torn_down.stderr) == (3, "written, not flushed", "teardown")


def test_ctrl_c_before_the_command_line_answers_is_one_line_and_130():
    """Ctrl-C while the command still starts (its workers started ahead, the command line being
    imported): ``interrupted`` and exit code 130, as once the command line answers it, no traceback."""
    code = ("import sys\nfrom qmcredit import __main__, decided_files\n"
            "def interrupted(argv):\n    raise KeyboardInterrupt\n"
            "decided_files.workers_ahead = interrupted\nsys.argv = ['qmcredit', 'compute', '--json', 'x.json']\n__main__.main()\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (out.returncode, out.stdout, out.stderr) == (130, "", "interrupted\n")
