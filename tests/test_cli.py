"""End-to-end: the installed `qmcredit` command, as a script or a preparer runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import EXAMPLES, example_file, example_names

EXE = Path(sys.executable).parent / "qmcredit"


def run(*args, cwd=None):
    return subprocess.run([str(EXE), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, "COLUMNS": "120"})


def test_compute_json_many_claims_in_order_with_an_invalid_one(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "qmcredit.claim/1", "taxpayer": {"id": "x", "tax": "cbt"}}')
    paths = [example_file(n) for n in example_names()]
    r = run("compute", "--json", paths[0], bad, *paths[1:])
    assert r.returncode == 1
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert len(lines) == len(paths) + 1
    assert lines[1]["error"] == "invalid claim" and lines[1]["problems"]
    assert [x["taxpayer_id"] for x in lines if "error" not in x] == [
        json.loads(p.read_text())["taxpayer"]["id"] for p in paths]
    assert "bad.json: location: is required but missing" in r.stderr
    assert "Traceback" not in r.stderr
    expected = json.loads((EXAMPLES / f"{example_names()[0]}.expected.json").read_text())
    assert lines[0]["credit"] == expected["credit"]
    assert lines[0]["explanation"][-1]["figure"] == "employee_months"


def test_compute_json_all_valid_exits_zero():
    r = run("compute", "--json", "--no-explain", EXAMPLES / "04-insurer.claim.json")
    assert r.returncode == 0, r.stderr
    assert "explanation" not in json.loads(r.stdout)


def test_worksheet_shows_checks_months_and_form_313_lines():
    r = run("compute", EXAMPLES / "01-expansion-cap-carryforward.claim.json")
    assert r.returncode == 0, r.stderr
    for words in ("Eligibility", "E4", "2003-04", "8.714286", "16964.29", "Part IV", "Part V", "6964.29", "1714.29"):
        assert words in r.stdout, words


def test_explain_walks_a_figure_down_to_employee_months():
    r = run("explain", EXAMPLES / "01-expansion-cap-carryforward.claim.json", "--figure", "credit.year_one", "--rows", "5")
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("credit.year_one = 16964.29")
    assert "new_positions.year_one = 6.785714" in out and "average_positions.base = 8.714286" in out
    assert "employee_months [B1]" in out and "<- employees[" in out
    r = run("explain", EXAMPLES / "01-expansion-cap-carryforward.claim.json", "--figure", "nope")
    # a figure the claim has not: the command line is wrong (2), not the claim (1, an invalid claim's code)
    assert r.returncode == 2 and r.stderr.startswith("qmcredit explain: --figure: no figure 'nope' in ") and "credit.year_one" in r.stderr


def test_validate_reports_every_problem_and_exit_codes(tmp_path):
    doc = json.loads((EXAMPLES / "01-expansion-cap-carryforward.claim.json").read_text())
    doc["employees"][0]["hours"]["2003-13"] = 5
    doc["periods"][0]["liability"] = "abc"
    p = tmp_path / "c.json"
    p.write_text(json.dumps(doc))
    r = run("validate", p)
    assert r.returncode == 1
    assert "employees[0].hours.2003-13" in r.stderr and "periods[0].liability" in r.stderr
    assert "Traceback" not in r.stderr
    r = run("validate", EXAMPLES / "02-refund-sustained-effort.claim.json")
    assert r.returncode == 0 and "valid: 12 employees" in r.stdout
    r = run("validate", tmp_path / "missing.json")
    assert r.returncode == 1 and "no such file" in r.stderr
    r = run("validate", tmp_path)  # a folder given for its files, a device: each said as it is, not "no such file"
    assert r.returncode == 1 and f"{tmp_path}: is a folder; give the claim files in it" in r.stderr
    r = run("compute", "--json", os.devnull)
    assert r.returncode == 1 and f"{os.devnull}: is not a regular file" in r.stderr
    assert run("compute").returncode == 2  # usage error


def test_help_texts():
    r = run("--help")
    assert r.returncode == 0 and "compute" in r.stdout and "explain" in r.stdout
    assert "--json" in run("compute", "--help").stdout


def test_compute_no_explain_gives_the_same_determinations_without_the_trace():
    """Issue 18: ``--no-explain`` builds no explanation at all (it used to build and drop it), and
    every other field of every example's determination is the same as with the trace."""
    import subprocess

    paths = [str(example_file(n)) for n in example_names()]
    runs = [subprocess.run([str(EXE), "compute", "--json", *flag, *paths], capture_output=True, text=True, timeout=300)
            for flag in ([], ["--no-explain"])]
    traced, bare = ([json.loads(line) for line in r.stdout.splitlines()] for r in runs)
    assert len(traced) == len(bare) == len(paths)

    def without_trace(d: dict) -> dict:
        return {**{k: v for k, v in d.items() if k != "explanation"},
                **({"locations": [without_trace(x) for x in d["locations"]]} if d.get("locations") else {})}

    for t, b in zip(traced, bare):
        assert "explanation" not in b and all("explanation" not in x for x in b.get("locations") or [])
        assert without_trace(t) == without_trace(b)


def test_compute_json_lines_are_each_claims_own_determination(tmp_path):
    """Issue 18: ``compute --json`` writes the employee-months of many claims in one pass
    (``to_json_lines``, 100 claims at a time); each line is still that claim's own
    ``to_json``, in the order given, an invalid claim's problems in its place."""
    import subprocess

    from qmcredit.core import decide_many
    from qmcredit.loaders import load_claim

    bad = tmp_path / "bad.claim.json"
    bad.write_text('{"format": "qmcredit.claim/1", "employees": [')
    examples = [str(example_file(n)) for n in example_names()]
    paths = [*examples * (110 // len(examples)), str(bad), *examples]  # past one chunk of 100
    r = subprocess.run([str(EXE), "compute", "--json", *paths], capture_output=True, text=True, timeout=600)
    assert r.returncode == 1 and r.stderr.startswith(f"{bad}: ")
    lines = r.stdout.splitlines()
    own = {p: decide_many([load_claim(p)])[0].to_json() for p in examples}
    assert len(lines) == len(paths)
    for path, line in zip(paths, lines):
        assert line == own[path] if path != str(bad) else json.loads(line)["claim"] == str(bad)


def _trace_rows(path: Path) -> list[dict]:
    """The Parquet trace read back with pyarrow (another reader than the writer's polars)."""
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    assert {str(t) for t in table.schema.types} == {"large_string"}  # exact text, never a binary float
    return table.to_pylist()


def test_compute_trace_writes_every_employee_month_to_parquet(tmp_path):
    """B1 (issue 18): ``compute --json --trace FILE.parquet`` writes the employee-months whole,
    one row each with its claim and location, the same as the JSON's trace lists them and as
    ``explain`` counts them; the JSON then names the file instead of listing them."""
    capped = json.loads((EXAMPLES / "03-part-time-equivalents.claim.json").read_text())
    capped["options"] = {"equivalent_hours_cap": 100}  # P4a: counted_hours where capped
    capped["employees"][0]["id"] = 'Zoë "the baker" \\ 1'  # text the JSON escapes
    (tmp_path / "capped.json").write_text(json.dumps(capped))
    paths = [EXAMPLES / "03-part-time-equivalents.claim.json", tmp_path / "capped.json", example_file("next/07-two-locations-shared-room")]
    trace = tmp_path / "trace.parquet"
    trace.write_bytes(b"an older file, replaced whole")
    with_file = run("compute", "--json", "--trace", trace, *paths)
    assert with_file.returncode == 0, with_file.stderr
    listed = run("compute", "--json", *paths)
    rows = _trace_rows(trace)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["capped.json", "trace.parquet"]  # written by a rename: no temporary left
    for named, whole in zip(map(json.loads, with_file.stdout.splitlines()), map(json.loads, listed.stdout.splitlines())):
        parts = whole.get("locations") or [whole]
        named_parts = named.get("locations") or [named]
        for part, named_part in zip(parts, named_parts):
            entry, named_entry = part["explanation"][-1], named_part["explanation"][-1]
            assert named_entry["rows_file"] == str(trace) and "rows" not in named_entry
            location = part["id"] if "locations" in whole else None
            mine = [{k: v for k, v in r.items() if v is not None and k not in ("claim_id", "location")}
                    for r in rows if r["claim_id"] == whole["claim_id"] and r["location"] == location]
            assert mine == entry["rows"] and mine
        named.pop("explanation"), whole.pop("explanation")
        for d in (named, whole):
            for part in d.get("locations", []):
                part.pop("explanation")
        assert named == whole  # every figure the same
    assert any("counted_hours" in r and r["counted_hours"] for r in rows)
    assert {r["location"] for r in rows} == {None, "federal", "admiral"}
    for path in paths[:2]:  # explain lists the same employee-months, with the same hours, status and equivalents
        shown = run("explain", path, "--figure", "average_positions.year_one", "--rows", "100000").stdout.splitlines()
        counted = [r for r in rows if r["claim_id"] == str(path) and r["period"] == "year_one" and r["status"] in ("full_time", "part_time_equivalent")]
        assert f"  employee_months [B1]: {len(counted)} counted employee-months in year_one" in shown
        for r in counted:
            eq = f" = {r['equivalents']} equivalents" if r["equivalents"] else ""
            assert f"    {r['employee_id']} {r['month']}: {r['hours']} h, {r['status']} ({r['rule']}){eq}  <- {r['source']}" in shown


def test_compute_trace_refuses_what_it_cannot_write(tmp_path):
    claim = EXAMPLES / "04-insurer.claim.json"
    for args, words in ((["--no-explain", "--trace", tmp_path / "t.parquet"], "without --no-explain"),
                        (["--trace", tmp_path / "t.json"], "must end in .parquet"),
                        (["--trace", tmp_path / "no" / "t.parquet"], "does not exist")):
        r = run("compute", "--json", *args, claim)
        assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr
        assert r.stdout == ""
    assert list(tmp_path.iterdir()) == []


def _large_claim(folder: Path) -> Path:
    """Example 01 with its employees twenty times over (380, under other ids): a claim file of
    about 0.2 MB, long to decide."""
    doc = json.loads((EXAMPLES / "01-expansion-cap-carryforward.claim.json").read_text())
    doc["employees"] = [{**e, "id": f"{e['id']}-{k}"} for k in range(20) for e in doc["employees"]]
    big = folder / "big.json"
    big.write_text(json.dumps(doc))
    return big


def test_compute_json_on_several_processes_writes_what_one_process_writes(tmp_path):
    """Issue 18: for many claim files ``compute --json`` uses the machine's cores (``--jobs``,
    ``decided_files``); what it writes, its trace file and its exit code are those of one process,
    invalid files reported in their places, and nothing else is said on stderr."""
    import polars as pl

    from qmcredit.decided_files import BYTES_PER_PROCESS, processes_for

    bad, broken = tmp_path / "bad.json", tmp_path / "broken.json"
    bad.write_text('{"format": "qmcredit.claim/1", "taxpayer": {"id": "x", "tax": "cbt"}}')
    broken.write_text('{"format": "qmcredit.claim/1", "employees": [')
    examples = [example_file(n) for n in example_names()]
    big = _large_claim(tmp_path)
    paths = [bad, *[big] * (2 * BYTES_PER_PROCESS // big.stat().st_size + 1), *examples, broken, *examples, bad]
    assert processes_for(paths, 2) == 2 and processes_for(examples * 100, 2) == 1  # small claims: one process pays less
    runs = {}
    for jobs in (1, 2):
        trace = tmp_path / f"trace-{jobs}.parquet"
        runs[jobs] = (run("compute", "--json", "--jobs", jobs, *paths), run("compute", "--json", "--jobs", jobs, "--trace", trace, *paths),
                      pl.read_parquet(trace))
    (one, one_traced, one_rows), (two, two_traced, two_rows) = runs[1], runs[2]
    for a, b in ((one, two), (one_traced, two_traced)):
        assert a.returncode == b.returncode == 1 and a.stdout.replace("trace-1.parquet", "trace-2.parquet") == b.stdout and a.stderr == b.stderr
        assert len(b.stdout.splitlines()) == len(paths) and b.stderr.startswith(f"{bad}: ") and "Traceback" not in b.stderr
        assert "Exception ignored" not in b.stderr and all(line.startswith((f"{bad}: ", f"{broken}: ")) for line in b.stderr.splitlines())
    assert one_rows.equals(two_rows) and one_rows.height > 1000


def test_compute_json_on_several_processes_writes_in_the_output_encoding(tmp_path):
    """Issue 18: a worker's lines reach the output as the bytes it wrote only where the output is
    UTF-8; in another encoding they are written as text, as one process writes them. A worker's
    employee-months (``--trace FILE``) come through a file too, and the trace is one process's.
    No file of theirs is left behind."""
    import polars as pl

    from qmcredit.decided_files import BYTES_PER_PROCESS

    doc = json.loads(_large_claim(tmp_path).read_text())
    for e in doc["employees"]:
        e["id"] = e["id"].replace("-", "-é", 1)  # in the trace: a text whose bytes differ in UTF-8 and Latin-1
    accented = tmp_path / "accented.json"
    accented.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    paths = [accented] * (2 * BYTES_PER_PROCESS // accented.stat().st_size + 1)
    spill = tmp_path / "tmp"
    spill.mkdir()
    out = {}
    for encoding in ("utf-8", "latin-1"):
        for jobs in (1, 2):
            r = subprocess.run([str(EXE), "compute", "--json", "--jobs", str(jobs), *map(str, paths)], capture_output=True, timeout=300,
                               env={**os.environ, "PYTHONIOENCODING": encoding, "TMPDIR": str(spill)})
            assert r.returncode == 0 and r.stderr == b"", r.stderr
            out[encoding, jobs] = r.stdout
    assert "-é".encode() in out["utf-8", 1] and out["utf-8", 1] == out["utf-8", 2]
    assert out["latin-1", 1] == out["latin-1", 2] == out["utf-8", 1].decode().encode("latin-1")
    traces = {}
    for jobs in (1, 2):
        traces[jobs] = tmp_path / f"trace-{jobs}.parquet"
        r = subprocess.run([str(EXE), "compute", "--json", "--jobs", str(jobs), "--trace", str(traces[jobs]), *map(str, paths)],
                           capture_output=True, timeout=300, env={**os.environ, "TMPDIR": str(spill)})
        assert r.returncode == 0 and r.stderr == b"", r.stderr
    one, two = (pl.read_parquet(traces[jobs]) for jobs in (1, 2))
    assert one.equals(two) and one.height > len(paths) and "-é" in one.item(0, "employee_id")
    assert list(spill.iterdir()) == []


@pytest.mark.parametrize("when", ["deciding", "writing"])
def test_ctrl_c_stops_compute_and_its_workers_without_a_traceback(tmp_path, when):
    """Ctrl-C (SIGINT to the command's whole process group, as a terminal sends it) while many
    claim files are decided on several processes, in the middle of a chunk or while a chunk's lines
    are written out: the command ends at once with ``interrupted`` and 130 (typer's own answer
    says nothing), no worker prints where it was stopped, and none is left running (a Ctrl-C
    while the lines were written left the workers running, holding the output open)."""
    import signal
    import time

    big = _large_claim(tmp_path)
    p = subprocess.Popen([str(EXE), "compute", "--json", "--jobs", "2", *[big] * 400], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        if when == "deciding":
            time.sleep(1.5)  # the worker started, and in the middle of a chunk
        else:
            assert p.stdout.read(1) == b"{"  # the first chunk's lines are being written
        os.killpg(p.pid, signal.SIGINT)
        err = p.communicate(timeout=60)[1].decode()
    finally:
        left = subprocess.run(["ps", "-o", "stat=", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
        if any(not s.startswith("Z") for s in left):
            os.killpg(p.pid, signal.SIGKILL)
    assert (p.returncode, err) == (130, "interrupted\n"), err
    time.sleep(0.5)
    states = subprocess.run(["ps", "-o", "stat=", "-g", str(p.pid)], capture_output=True, text=True).stdout.split()
    assert all(s.startswith("Z") for s in states), states  # an ended worker not yet reaped by init, at most


def _group_left(pid: int) -> list[str]:
    """The processes of the process group ``pid`` that are still running (an ended worker not yet
    reaped by init, a zombie, is not)."""
    states = subprocess.run(["ps", "-o", "stat=", "-g", str(pid)], capture_output=True, text=True).stdout.split()
    return [s for s in states if not s.startswith("Z")]


def test_sigterm_stops_compute_its_workers_and_its_scratch_files(tmp_path):
    """SIGTERM to the command alone (``kill``, ``timeout``, a service manager) while many claim
    files are decided on several processes: ``terminated`` and 143, its workers shut down and its
    scratch folder removed on the way out (before, the command died where it stood: its worker ran
    on, holding the output open, and the scratch folder stayed)."""
    import signal
    import time

    big, spill = _large_claim(tmp_path), tmp_path / "spill"
    spill.mkdir()
    p = subprocess.Popen([str(EXE), "compute", "--json", "--jobs", "2", *[big] * 400], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True, env={**os.environ, "TMPDIR": str(spill)})
    try:
        assert p.stdout.read(1) == b"{"
        os.kill(p.pid, signal.SIGTERM)
        err = p.communicate(timeout=60)[1].decode()
    finally:
        if _group_left(p.pid):
            os.killpg(p.pid, signal.SIGKILL)
    assert (p.returncode, err) == (143, "terminated\n"), err
    time.sleep(0.5)
    assert _group_left(p.pid) == [] and list(spill.iterdir()) == []


def test_a_worker_ends_with_the_command_killed(tmp_path):
    """The command killed outright (SIGKILL, out of memory: nothing of it runs again): its worker
    processes end by themselves (``processes._ends_with_the_command``) rather than wait for work
    for ever."""
    import signal
    import time

    big = _large_claim(tmp_path)
    p = subprocess.Popen([str(EXE), "compute", "--json", "--jobs", "2", *[big] * 400], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         start_new_session=True)
    try:
        assert p.stdout.read(1) == b"{"
        assert len(_group_left(p.pid)) >= 2  # the command and its worker
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        for _ in range(100):
            if not _group_left(p.pid):
                break
            time.sleep(0.1)
        assert _group_left(p.pid) == []
    finally:
        p.stdout.close()
        if _group_left(p.pid):
            os.killpg(p.pid, signal.SIGKILL)


def test_compute_ends_at_once_with_its_exit_code_and_its_output_whole(tmp_path):
    """``compute`` ends without the interpreter's teardown (``cli.ends_at_once``, issue 18): its
    output is flushed first and its exit code kept, and a reader that stops early (a closed pipe)
    gets no traceback from it."""
    example = example_file(example_names()[0])
    whole = run("compute", "--json", example)
    assert whole.returncode == 0 and whole.stdout.endswith("}\n") and json.loads(whole.stdout)["claim_id"]
    missing = run("compute", "--json", example, tmp_path / "missing.json")
    assert missing.returncode == 1 and missing.stdout.count("\n") == 2 and "missing.json: " in missing.stderr
    for args, first in ((["--json"], b'{"format":'), ([], "╭─ Form".encode())):
        p = subprocess.Popen([str(EXE), "compute", *args, *[example] * 200], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert p.stdout.read(len(first)) == first
        p.stdout.close()
        assert (p.wait(timeout=120), p.stderr.read()) == (0, b"")  # done, as far as its reader wanted: not 1, an invalid claim's code


def test_the_command_line_runs_off_the_main_thread():
    """``cli.main`` called from a program's own thread, where no signal handler can be set (its
    SIGTERM answer is set only on the main thread): the command runs, no traceback."""
    code = ("import sys, threading\nsys.argv = ['qmcredit', '--help']\nfrom qmcredit.cli import main\n"
            "def run():\n    try:\n        main()\n    except SystemExit as e:\n        print('exit', e.code)\n"
            "t = threading.Thread(target=run)\nt.start()\nt.join()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.stdout.endswith("exit 0\n") and "Traceback" not in r.stderr, r.stderr


@pytest.mark.parametrize("when", ["the exit code known", "the interpreter's teardown"])
def test_a_sigterm_once_the_command_is_done_changes_nothing(when):
    """SIGTERM met once the command's exit code is known (``cli._outcome``) is ignored: the
    process ends with that code, its output whole. Before, met just after the command it ended in
    a traceback and exit 1 (CI saw a finished ``reform`` exit 1), and met in the interpreter's
    teardown it gave a line "Exception ignored" or killed the process."""
    send = "signal.raise_signal(signal.SIGTERM)"
    hook = (f"real = gc.freeze\ndef freeze():\n    {send}\n    real()\ngc.freeze = freeze\n" if when == "the exit code known"
            else f"atexit.register(lambda: {send})\n")
    code = ("import atexit, gc, signal, sys\nsys.argv = ['qmcredit', '--help']\nfrom qmcredit.cli import main\n" + hook + "main()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (0, "") and "Usage" in r.stdout


@pytest.mark.parametrize("group", [[], ["audit"]])
def test_each_command_is_listed_on_one_line(group):
    """``--help`` lists each command by the first paragraph of its help, on one line of a wide
    terminal; before, rich's list kept the docstring's line breaks (``validate``, ``reform``,
    ``audit verify`` ran over two or three lines, cut mid-sentence)."""
    shown = subprocess.run([str(EXE), *group, "--help"], capture_output=True, text=True, timeout=60, env={**os.environ, "COLUMNS": "400"}).stdout
    panel = shown[shown.index("Commands"):].splitlines()[1:-1]
    assert panel and all(not line[1:].startswith("  ") for line in panel), panel  # each row starts with its command's name

