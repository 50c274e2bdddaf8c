"""The artifact store: a release root's layout (`layout`), its tables and DuckDB (`tables`), the
manifest and the integrity checks (`integrity`), ids, staging and publication (`releases`), and
the root's lock (`lock`)."""
