"""Files written whole: a temporary file beside the one named, renamed over it once written, so
that a reader never sees half a file and a failed write leaves the former file as it was; and
why a file a command is to write cannot be written there, said before any work."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def umask() -> int:
    """This process's umask (read by setting it, and setting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


def new_file_mode() -> int:
    """The permissions ``open`` gives a new file here (0666 less the umask)."""
    return 0o666 & ~umask()


@contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path`` to write, renamed over ``path`` once the block is done,
    removed if it fails. It gets the permissions a new file gets (``mkstemp``'s own are the
    owner's alone: a form or a trace written for others to read was not readable by them)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    try:
        os.chmod(tmp, new_file_mode())
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def unwritable(path: Path, suffixes: tuple[str, ...] = (), kind: str = "") -> str | None:
    """Why ``path`` cannot be the file a command writes, checked before the command's work so that
    a long run does not end on it: a suffix not among ``suffixes`` (``kind``: what the file is
    written as), a folder, or a folder that does not exist; None when it can be written there."""
    if suffixes and path.suffix.lower() not in suffixes:
        return f"{str(path)!r} must end in {' or '.join(suffixes)} ({kind})"
    if path.is_dir():
        return f"{str(path)!r} is a folder; give the file to write in it"
    if not path.parent.is_dir():
        return f"the folder {str(path.parent)!r} does not exist"
    return None
