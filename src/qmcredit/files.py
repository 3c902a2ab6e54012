"""Files written whole: a temporary file beside the one named, renamed over it once written, so
that a reader never sees half a file and a failed write leaves the former file as it was."""

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
