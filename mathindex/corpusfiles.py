"""Reading a corpus file safely: the one module that lists and opens the files under a corpus root.

The Lean extractor, the LaTeX/XML extractor and the pin stage all read corpus files through here,
so one set of rules holds everywhere (docs/contracts.md, "Corpus confinement"):

- Listing: every name with the corpus's suffixes under the root, whatever it is (a link, a FIFO), so
  that a refusal becomes an errors row instead of vanishing; directory links are not followed and
  hidden directories (`.git`, `.lake`) are skipped; a directory that cannot be listed is an entry.
- Refusal (`Refused`, a one-line reason): a real path (every link resolved) outside the real root;
  anything but a regular file (FIFO, device, socket, directory, broken link), told by `stat` before
  any open, so a FIFO is never opened; a size over the caller's cap, told by the same `stat`, so a
  2 GB file is never read; a file that cannot be opened (permission denied).
- Reading: the real path is opened with O_NOFOLLOW | O_NONBLOCK, `fstat` must show the same
  regular file, and at most cap + 1 bytes are read, so a file that grows past its cap is refused.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

# The most bytes a corpus file may have, by suffix (anything else, e.g. a tags file: DEFAULT_MAX_BYTES).
MAX_BYTES = {".lean": 50_000_000, ".tex": 16 * 1024 * 1024, ".xml": 256 * 1024 * 1024}
DEFAULT_MAX_BYTES = 16 * 1024 * 1024
CHUNK_BYTES = 1 << 20
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"))


class Refused(Exception):
    """A corpus file that is not read; `str()` is the one-line reason its errors row carries."""


@dataclass(frozen=True)
class CorpusRoot:
    """A corpus root by its real path (every link resolved): the boundary no read crosses."""

    real: Path

    @classmethod
    def of(cls, root: Path | str) -> CorpusRoot:
        return cls(Path(os.path.realpath(root)))

    def contains(self, path: Path | str) -> bool:
        """True when the real path of `path` is the root or lies under it."""
        return Path(os.path.realpath(path)).is_relative_to(self.real)


def max_bytes_for(path: Path | str) -> int:
    """The cap of a corpus file by its suffix."""
    return MAX_BYTES.get(Path(path).suffix, DEFAULT_MAX_BYTES)


def too_large(size: int, cap: int) -> str:
    return f"file too large ({size} bytes > cap {cap}); not read"


def list_files(root: Path, suffixes: tuple[str, ...]) -> list[tuple[str, Path]]:
    """(path relative to root with `/`, path) of every name ending in one of `suffixes` under root,
    sorted by relative path; a directory that cannot be listed is an entry too (reading it says why)."""
    root = Path(root)
    out: list[tuple[str, Path]] = []

    def unlisted(exc: OSError) -> None:
        if exc.filename is not None:
            out.append((_rel(Path(exc.filename), root), Path(exc.filename)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlisted):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            if name.endswith(suffixes):
                p = Path(dirpath) / name
                out.append((_rel(p, root), p))
    out.sort(key=lambda e: e[0])
    return out


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() if path != root else "."


def check(root: CorpusRoot, path: Path | str, max_bytes: int) -> tuple[str, os.stat_result]:
    """The real path and stat of a corpus file that may be read; `Refused` when it resolves outside
    the root, is not a regular file or is larger than `max_bytes`. Nothing is opened."""
    real = os.path.realpath(path)
    if not Path(real).is_relative_to(root.real):
        raise Refused("resolves outside the corpus root (a symbolic link out of the tree); not read")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise Refused("broken symbolic link; not read" if os.path.islink(path) else "no such file; not read") from None
    except OSError as exc:
        raise Refused(f"{_strerror(exc)}; not read") from None
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        if stat.S_ISDIR(st.st_mode):
            try:
                os.scandir(real).close()
            except OSError as exc:
                raise Refused(f"directory cannot be listed ({_strerror(exc)}); not read") from None
        raise Refused(f"{kind}, not a regular file; not read")
    if st.st_size > max_bytes:
        raise Refused(too_large(st.st_size, max_bytes))
    return real, st


def regular_size(path: Path | str) -> int:
    """The size of a regular file (links followed); 0 for anything else or what cannot be stat'ed."""
    try:
        st = os.stat(path)
    except OSError:
        return 0
    return st.st_size if stat.S_ISREG(st.st_mode) else 0


def _strerror(exc: OSError) -> str:
    return (exc.strerror or type(exc).__name__).lower()


class BoundedReader:
    """A binary file read with a budget: reading past `max_bytes` raises `Refused`."""

    def __init__(self, fd: int, max_bytes: int) -> None:
        self._fd, self._cap, self._left = fd, max_bytes, max_bytes

    def read(self, size: int | None = -1) -> bytes:
        """Up to `size` bytes (all that is left when negative or None); b"" at the end."""
        whole = size is None or size < 0
        want = self._left + 1 if whole else min(size, self._left + 1)
        parts: list[bytes] = []
        got = 0
        while got < want:
            chunk = os.read(self._fd, want - got)
            if not chunk:
                break
            parts.append(chunk)
            got += len(chunk)
            if not whole:
                break
        self._left -= got
        if self._left < 0:
            raise Refused(f"grew past the cap of {self._cap} bytes while being read; not read")
        return b"".join(parts)


@contextmanager
def open_file(root: CorpusRoot, path: Path | str, max_bytes: int) -> Iterator[BoundedReader]:
    """A corpus file opened for a bounded read, after `check`; `Refused` when it may not be read."""
    real, st = check(root, path, max_bytes)
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise Refused(f"{_strerror(exc)}; not read") from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            raise Refused("the file changed while being opened; not read")
        yield BoundedReader(fd, max_bytes)
    finally:
        os.close(fd)


def read_file(root: CorpusRoot, path: Path | str, max_bytes: int) -> bytes:
    """The bytes of a corpus file (at most `max_bytes`); `Refused` when it may not be read."""
    with open_file(root, path, max_bytes) as handle:
        return handle.read()


def digest(root: CorpusRoot, path: Path | str, max_bytes: int) -> str:
    """sha256 hex of a corpus file's bytes, read in chunks; for a refused file `refused:` + the sha256
    of its reason (what extraction records for it), so a pin covers exactly what extraction reads."""
    try:
        with open_file(root, path, max_bytes) as handle:
            h = hashlib.sha256()
            while chunk := handle.read(CHUNK_BYTES):
                h.update(chunk)
            return h.hexdigest()
    except Refused as exc:
        return "refused:" + hashlib.sha256(str(exc).encode()).hexdigest()
