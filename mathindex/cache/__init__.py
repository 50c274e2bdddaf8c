"""The cache layer (its face only: callers import from its modules, so that asking the layout
loads no Parquet library): one layout (`CacheLayout`: every cache folder), one atomic writer and checked
readers (`shards`), one code digest over a declared module set (`digest`, `codes`), and the
whole-stage cache (`stages.StageCache`).

Every cache keeps what it computed under a root's cache directory (`store.RootLayout.cache`),
keyed by content and by the digest of the code that makes it; a damaged file is skipped with a
logged warning and recomputed, never trusted.
"""
