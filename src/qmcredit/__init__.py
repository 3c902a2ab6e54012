"""qmcredit: the New Jersey credit for new jobs in a qualified municipality, N.J.S.A. 52:27BBB-55.

The public API, the only door the batch engine, the service and the pages use:

- ``decide(claim) -> Determination`` and ``decide_many(claims)``: the rules, pure functions.
- ``load_claim(path)``, ``claim_from_json(text)``, ``claim_from_dict(doc)``, ``read_payroll(...)``:
  the loaders of FORMAT.md (claim JSON with embedded employees, or header plus payroll table).
- ``ClaimError`` (with ``.problems``), ``Problem``, ``Claim``, ``Determination``.
"""

import importlib
import os
from typing import TYPE_CHECKING

# Polars' allocator (jemalloc) gives freed pages back to the kernel at once by default; the batch
# frees and re-allocates the same large buffers partition after partition, and paid for it in
# page faults (a third of its system time; 8% of its wall time at 9.2M rows, benchmarks/batch.md).
# Keep freed pages 10 s. Read when polars loads, so set before it does; a setting given stays.
os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:10000,muzzy_decay_ms:0")

#: The public API: each name and the module it lives in. A name's module is imported when the name
#: is first used (PEP 562), not when the package is: ``qmcredit batch`` starts reading its payroll
#: table before the rules' modules (pydantic and the claim models) are imported, and imports them
#: while the rows are read.
_API = {
    "Claim": "claim", "ClaimHeader": "claim",
    "decide": "core", "decide_many": "core",
    "Determination": "determination",
    "claim_from_dict": "loaders", "claim_from_json": "loaders", "load_claim": "loaders", "read_payroll": "loaders",
    "ClaimError": "problems", "Problem": "problems",
}

if TYPE_CHECKING:  # the same names, for type checkers and editors
    from .claim import Claim, ClaimHeader
    from .core import decide, decide_many
    from .determination import Determination
    from .loaders import claim_from_dict, claim_from_json, load_claim, read_payroll
    from .problems import ClaimError, Problem

__version__ = "0.1.0"
__all__ = [
    "Claim", "ClaimHeader", "ClaimError", "Determination", "Problem",
    "claim_from_dict", "claim_from_json", "decide", "decide_many", "load_claim", "read_payroll",
]


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_API})
