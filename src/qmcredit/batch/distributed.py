"""The batch on a Dask cluster: the same ``decide_partition`` per claim-hash partition, each a task.

The driver splits the payroll by claim hash and writes the outputs; workers decide partitions.
Workers read the partition files by path and write each partition's ledger rows beside them, so on a
multi-machine cluster ``workdir`` must be storage every worker and the driver see (a shared file
system); a local cluster shares this machine's disk. Outputs are
sorted by claim id, so they are identical to the single-machine run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from distributed import Client, LocalCluster, as_completed

from ..problems import ClaimError, Problem
from .engine import Mapper

if TYPE_CHECKING:
    from .partition import PartitionResult


def dask_map(client: Client) -> Mapper:
    """A ``Mapper`` that runs each partition as a Dask task and yields results as they finish."""

    def mapper(fn: Callable, args: list[tuple]) -> Iterator[tuple[int, PartitionResult]]:
        futures = [client.submit(fn, *a, key=f"qmcredit-batch-{a[0]}-{id(args)}", pure=False) for a in args]
        for future in as_completed(futures):
            yield future.result()
            future.release()

    return mapper


@contextmanager
def cluster(scheduler: str | None = None, workers: int | None = None, processes: bool = True) -> Iterator[Client]:
    """A client of the cluster at ``scheduler`` (``tcp://host:8786``), or of a local cluster of
    ``workers`` single-threaded workers that this call starts and stops."""
    if scheduler:
        try:
            client = Client(scheduler)
        except (ValueError, OSError) as e:  # no address, or nothing answering there (Dask waits 30 s)
            raise ClaimError([Problem("--scheduler", f"{scheduler!r}: no Dask scheduler reached ({str(e).splitlines()[0]}); "
                                                     "give its address, e.g. tcp://10.0.0.5:8786")]) from None
        with client:
            yield client
        return
    with LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=processes,
                      dashboard_address=None) as local, Client(local) as client:
        yield client
