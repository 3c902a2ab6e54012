"""The batch outputs (docs/batch.md): ``claims.parquet`` (one row per claim), ``ledger.parquet``
(one row per claim and period), ``determinations.jsonl`` on request, and ``summary.json``.

A run writes into a fresh folder beside ``--out`` (``.NAME.new-PID-*``), and ``manifest.json``
last: every file with its size and SHA-256, and the run's inputs. Only then is the folder swapped
in for ``--out`` (two renames), so ``--out`` holds one finished run or none, never a mix of two;
a run that fails or is killed leaves its fresh folder, which the next run removes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from ..files import umask
from ..problems import ClaimError, Problem

#: the files a run writes; ``--out`` may hold these (a former run) and nothing else
FILES = ("claims.parquet", "ledger.parquet", "determinations.jsonl", "summary.json", "manifest.json")

_TEXT = pl.Utf8
#: Figures are text with the exact digits of FORMAT.md (positions: exact decimals; money: cents).
CLAIMS_SCHEMA = {
    "claim_id": _TEXT, "taxpayer_id": _TEXT, "status": _TEXT, "eligible": pl.Boolean,
    "ineligible_because": _TEXT,
    "average_base": _TEXT, "average_year_one": _TEXT, "average_year_two": _TEXT,
    "new_year_one": _TEXT, "new_year_two": _TEXT, "credit_year_one": _TEXT, "credit_year_two": _TEXT,
    "sustained_effort_ratio": _TEXT, "refund": _TEXT, "carried_forward": _TEXT, "pending": pl.Boolean,
    "problems": _TEXT,
}
LEDGER_SCHEMA = {
    "claim_id": _TEXT, "period": pl.Int32, "start": pl.Date, "end": pl.Date, "allowed": _TEXT, "room": _TEXT,
    "applied": _TEXT, "refund": _TEXT, "forfeited": _TEXT, "carried_forward": _TEXT,
    "allowed_year_one": _TEXT, "applied_year_one": _TEXT, "forfeited_year_one": _TEXT, "carried_forward_year_one": _TEXT,
}


def in_order(frame: pl.DataFrame, *keys: str) -> pl.DataFrame:
    """``frame`` sorted by ``keys`` (each row's first key, then the next, ascending), as the
    outputs are: as it is when its rows are so already, each strictly after the one before (the
    partitions of a payroll table in claim order come back so; a check of each row against the
    one before, and the copy into one piece, cost about a third of a sort at 2 million ledger
    rows in 48 partitions), else sorted. Kept, it is made one piece, as a sort leaves distinct
    rows, so that its Parquet file is laid out alike."""
    ok, tied = pl.lit(False), pl.lit(True)
    for k in keys:
        ok = ok | (tied & (pl.col(k) > pl.col(k).shift()))
        tied = tied & (pl.col(k) == pl.col(k).shift())
    if frame.height < 2 or frame.select(ok.slice(1).fill_null(False).all()).item():
        return frame.rechunk()
    return frame.sort(*keys).rechunk()  # a sort of pieces already in order may hand them back as they are


def write_parquet(df: pl.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    df.write_parquet(tmp, statistics=True)
    os.replace(tmp, path)


def write_lines(lines: Iterable[str], path: Path) -> None:
    """JSON Lines: one determination per line."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(line)
            out.write("\n")
    os.replace(tmp, path)


def write_json(doc: dict, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    os.replace(tmp, path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(folder: Path, prefix: str) -> None:
    """Remove the folders ``prefix``PID-* in ``folder`` whose process is gone (a killed run's)."""
    if not folder.is_dir():
        return
    for p in folder.glob(f"{prefix}*"):
        pid = p.name[len(prefix):].split("-", 1)[0]
        if p.is_dir() and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(p, ignore_errors=True)


def ours_of(files: frozenset[str], scratch: str) -> Callable[[str], bool]:
    """Which names a run may have left in its ``--out`` (``fresh_folder``): one of ``files``, one's
    half-written ``.NAME.tmp``, or a run's scratch folder (named ``scratch``PID-...)."""
    def ours(name: str) -> bool:
        return name in files or name.startswith(scratch) or (name.startswith(".") and name.endswith(".tmp") and name[1:-4] in files)
    return ours


_ours = ours_of(FILES, ".qmcredit-batch-")


def fresh_folder(out: Path, ours: Callable[[str], bool] = _ours) -> Path:
    """A new, empty folder beside ``out`` for this run's outputs; ``out`` must be a folder of
    former runs' outputs (or absent: ``ours`` says which names a run writes), since the finished
    run replaces it whole (``swap_in``)."""
    out = out.resolve()
    here = Path.cwd().resolve()
    if here == out or out in here.parents:
        raise ClaimError([Problem(str(out), "--out is the folder you are in, or holds it; the run replaces the folder whole, "
                                            "so give a folder of its own, such as --out results")])
    if out.exists():
        if not out.is_dir():
            raise ClaimError([Problem(str(out), "--out is a file; give a folder for the outputs")])
        other = sorted(p.name for p in out.iterdir() if not ours(p.name))
        if other:
            raise ClaimError([Problem(str(out), f"--out holds other files ({', '.join(other[:5])}); "
                                                "the run replaces the folder whole: give a folder of its own")])
    out.parent.mkdir(parents=True, exist_ok=True)
    remove_stale(out.parent, f".{out.name}.new-")
    remove_stale(out.parent, f".{out.name}.old-")
    fresh = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-{os.getpid()}-", dir=out.parent))
    fresh.chmod(0o777 & ~umask())  # a folder as mkdir makes it (mkdtemp's is private)
    return fresh


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def write_manifest(fresh: Path, inputs: dict[str, Path | None], options: dict) -> None:
    """Write ``manifest.json`` in ``fresh``, last (``whole_folder`` then swaps it in for ``--out``)."""
    def described(path: Path) -> dict:
        st = path.stat()
        return {"path": str(path.resolve()), "bytes": st.st_size,
                "modified": datetime.fromtimestamp(st.st_mtime, timezone.utc).isoformat()}
    files = {p.name: {"bytes": p.stat().st_size, "sha256": sha256(p)} for p in sorted(fresh.iterdir()) if p.name in FILES}
    write_json({"format": "qmcredit.batch-manifest/1", "finished": datetime.now(timezone.utc).isoformat(),
                "inputs": {k: described(v) for k, v in inputs.items() if v is not None}, "options": options,
                "files": files}, fresh / "manifest.json")


@contextmanager
def whole_folder(out: Path, ours: Callable[[str], bool] = _ours) -> Iterator[Path]:
    """A fresh folder beside ``out`` for a run's files (``fresh_folder``: ``out`` may hold only
    what ``ours`` names), put in place of ``out`` once the run is done (``swap_in``): ``out`` holds
    one finished run, never a mix of two nor a file of a former run that this one has not; a run
    that fails or is stopped leaves ``out`` as it was and its fresh folder removed (a killed run's:
    by the next run, once its process is gone); one stopped while its files are swapped in, or
    after, stops with the new run in place. The batch's, ``reform``'s and ``cost``'s."""
    fresh = fresh_folder(out, ours)
    try:
        yield fresh
        swap_in(fresh, out)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise


def swap_in(fresh: Path, out: Path) -> None:
    """The finished run's folder ``fresh`` (``fresh_folder``) put in place of ``out`` (two
    renames, with Ctrl-C and SIGTERM held between them), the former run's folder then removed:
    ``out`` holds one finished run or none."""
    out = out.resolve()
    old, swapped = None, False
    try:
        with _signals_held():
            if out.exists():
                old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-{os.getpid()}-", dir=out.parent))
                os.replace(out, old / out.name)
            try:
                os.replace(fresh, out)
            except BaseException:
                if old is not None:  # the former run back in place
                    os.replace(old / out.name, out)
                raise
            swapped = True
    finally:  # the former run's folder, once replaced (also when a signal held is raised again), or the empty one
        if old is not None and (swapped or not (old / out.name).exists()):
            shutil.rmtree(old, ignore_errors=True)


@contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM held, not lost, while a few lines run whole (``swap_in``'s renames: one
    between them left no ``--out``, the former run moved aside and the new one removed, and the
    next run removed the former too). Python runs a signal's handler between any two lines of the
    main thread, whichever thread the signal reached, so each handler is set for that time to note
    its signal, which is raised again once the lines are done. Off the main thread, where no
    handler can be set, nothing is held."""
    import signal

    caught: list[int] = []
    try:
        before = {s: signal.signal(s, lambda n, _frame: caught.append(n)) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        for s in caught:
            signal.raise_signal(s)
