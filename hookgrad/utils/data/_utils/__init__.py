"""Helpers of ``hookgrad.utils.data``: collation, fetchers, worker information."""
from . import collate, fetch, worker  # noqa: F401
from .worker import get_worker_info  # noqa: F401
