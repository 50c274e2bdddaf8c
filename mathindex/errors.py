"""The user-facing errors the command line maps to exit codes, in a module that imports nothing,
so `mathindex` classifies an error without loading the modules that raise it. Each stays importable
from the module that raises it (sources, store.integrity, store.lock, embed.models, embed.pairs)."""


class SourceError(ValueError):
    """An input that cannot be used as given (missing, unpinned or not matching its pin)."""


class IntegrityError(Exception):
    """A release or pointer file that does not match what was written: a file missing, of another
    size or sha256 than the manifest records, or an unreadable manifest or published.json (exit 4)."""


class ModelError(ValueError):
    """A one-line, user-facing error about a model directory."""


class PairError(ValueError):
    """A one-line, user-facing error about the pair miner's inputs."""


class RootBusy(Exception):
    """Another run holds the release root's lock (exit 5)."""
