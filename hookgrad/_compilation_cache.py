"""JAX's persistent compilation cache, on by default for hookgrad's many small programs.

Eagerly, every op and every fused backward chain is an XLA program compiled on first
sight: a fresh process (a notebook kernel restart, a script run again) pays those
compilations again, though their results are the same. JAX can keep compiled programs on
disk; hookgrad turns that on at import, in a user cache directory, unless the user
configured JAX's cache already or turned hookgrad's off:

- ``HOOKGRAD_COMPILATION_CACHE=0`` (or ``off``/``false``): leave JAX's settings alone;
- ``HOOKGRAD_COMPILATION_CACHE=/some/dir``: use that directory;
- otherwise ``$XDG_CACHE_HOME/hookgrad/xla`` (``~/.cache/hookgrad/xla``), kept under
  1 GiB (the least recently used programs are removed when a process starts).

A directory set through ``jax.config.update("jax_compilation_cache_dir", ...)`` before
importing hookgrad, or ``JAX_COMPILATION_CACHE_DIR``, is kept as it is.

The directory takes no lock, so it needs no ``filelock`` and no process waits for another:
JAX's own bounded cache locks the whole directory for every lookup and write (polling
while another process holds it), and scans it on every write. Here an entry is written to
a temporary file and renamed into place (a reader sees a whole entry or none, and two
processes writing one entry write the same bytes); the size bound is kept by one scan in
a background thread when a process starts (at most once an hour: a stamp file records the
last scan, which costs about half a second of CPU on a full directory); the entries this process read or wrote stay in
memory too (up to ``MEMORY_BYTES``), so a program compiled again needs no file.
"""
import collections
import os
import threading
import time

import jax

ENV = "HOOKGRAD_COMPILATION_CACHE"
_OFF = frozenset({"0", "off", "false", "no"})
MAX_BYTES = 1 << 30
MEMORY_BYTES = 64 << 20
PRUNE_EVERY = 3600.0  # seconds between two scans of one directory
_STAMP = "hookgrad-pruned"
_SUFFIX = "-cache"  # JAX's name for an entry: the two caches read each other's files


def default_dir():
    """Where hookgrad keeps compiled programs unless told otherwise."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "hookgrad", "xla")


class DirectoryCache:
    """JAX's cache interface (``get``/``put`` of bytes by key) over a directory, lock-free,
    with an in-memory layer in front (module docstring)."""

    def __init__(self, path, memory_bytes=MEMORY_BYTES):
        self._path = path
        self._memory = collections.OrderedDict()
        self._memory_left = memory_bytes
        self._mutex = threading.Lock()  # the compiling thread and the caller's both look up

    def _file(self, key):
        return os.path.join(self._path, key + _SUFFIX)

    def get(self, key):
        with self._mutex:
            value = self._memory.get(key)
            if value is not None:
                self._memory.move_to_end(key)
                return value
        try:
            with open(self._file(key), "rb") as f:
                value = f.read()
            os.utime(self._file(key))  # recently used: the size bound removes it last
        except OSError:  # absent (or removed by another process's size bound meanwhile)
            return None
        self._remember(key, value)
        return value

    def put(self, key, value):
        self._remember(key, value)
        final = self._file(key)
        if os.path.exists(final):
            return
        temp = f"{final}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            with open(temp, "wb") as f:
                f.write(value)
            os.replace(temp, final)  # atomic: readers never see part of an entry
        except OSError:  # a full or read-only disk: the program just is not kept
            try:
                os.remove(temp)
            except OSError:
                pass

    def _remember(self, key, value):
        with self._mutex:
            if key in self._memory or len(value) > self._memory_left:
                return
            self._memory[key] = value
            self._memory_left -= len(value)
            while self._memory_left < 0:
                _, old = self._memory.popitem(last=False)
                self._memory_left += len(old)


def prune(path, max_bytes=MAX_BYTES):
    """Remove the least recently used entries of ``path`` until it holds at most
    ``max_bytes`` (stray temporary files of crashed writers go too)."""
    entries, total = [], 0
    try:
        names = os.listdir(path)
    except OSError:
        return
    for name in names:
        full = os.path.join(path, name)
        try:
            st = os.stat(full)
        except OSError:
            continue
        if name.endswith(".tmp") or name.endswith("-atime") or name == _STAMP:
            continue
        entries.append((st.st_mtime, full, st.st_size))
        total += st.st_size
    entries.sort()
    for _, full, size in entries:
        if total <= max_bytes:
            break
        try:
            os.remove(full)
        except OSError:
            continue
        total -= size


def prune_due(path, every=PRUNE_EVERY, now=None):
    """Whether ``path`` was last scanned over ``every`` seconds ago; if so, marks it scanned
    now (so a burst of short processes scans it once)."""
    stamp = os.path.join(path, _STAMP)
    now = time.time() if now is None else now
    try:
        if now - os.stat(stamp).st_mtime < every:
            return False
    except OSError:
        pass
    try:
        with open(stamp, "a"):
            pass
        os.utime(stamp, (now, now))
    except OSError:
        return False  # a directory this process cannot write: nothing to prune either
    return True


def _install(path):
    """Make ``DirectoryCache(path)`` JAX's persistent cache. JAX has no public hook for a
    cache object; without its private slot, JAX's own cache is used with eviction off
    (which also needs no lock) and ``prune`` keeps the bound."""
    try:
        from jax._src import compilation_cache as jax_cache
        with jax_cache._cache_initialized_mutex:
            if jax_cache._cache is None:
                jax_cache._cache = DirectoryCache(path)
                jax_cache._cache_initialized = True
    except (ImportError, AttributeError):
        pass


def configure(environ=os.environ):
    """Turn JAX's persistent cache on for this process as the module docstring says;
    returns the directory used, or None when it was left alone."""
    setting = environ.get(ENV, "").strip()
    if setting.lower() in _OFF:
        return None
    if jax.config.jax_compilation_cache_dir or environ.get("JAX_COMPILATION_CACHE_DIR"):
        return None  # the user's own JAX setting wins
    path = setting or default_dir()
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:  # a read-only home: run without the cache rather than fail the import
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    # NOTE: hookgrad's programs are small (an op, a fused chain): JAX's default threshold
    # of one second of compile time would keep none of them
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    # NOTE: -1: JAX's own bounded cache would need filelock and lock every lookup
    jax.config.update("jax_compilation_cache_max_size", -1)
    _install(path)
    if prune_due(path):
        threading.Thread(target=prune, args=(path,), daemon=True,
                         name="hookgrad-cache-prune").start()
    return path
