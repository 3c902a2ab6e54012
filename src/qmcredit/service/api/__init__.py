"""The HTTP API, version 1 (``/api/v1``): one router per kind of record."""
