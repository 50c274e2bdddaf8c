"""The cache layer: one layout (`CacheLayout`: every cache folder), one atomic writer and checked
readers (`shards`), one code digest over a declared module set (`digest`, `codes`), and the
whole-stage cache (`stages.StageCache`).

Every cache keeps what it computed under a root's cache directory (`store.RootLayout.cache`),
keyed by content and by the digest of the code that makes it; a damaged file is skipped with a
logged warning and recomputed, never trusted.
"""

from mathindex.cache.digest import CodeSet, code_digest, table_digest
from mathindex.cache.layout import CacheLayout
from mathindex.cache.shards import ShardStore, read_arrow, read_parquet, write_arrow, write_atomic, write_parquet

__all__ = ["CacheLayout", "CodeSet", "ShardStore", "code_digest", "read_arrow", "read_parquet", "table_digest",
           "write_arrow", "write_atomic", "write_parquet"]
