"""The informal channel (search/informal.py): prose queries' first candidates re-ordered by the
cosine of their informal renderings, on a tiny table the test writes and a bag-of-words embedder."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mathindex.search.engine import SearchEngine
from mathindex.search.weights import weights_for
from mathindex.search.identifier import IdentifierResolver
from mathindex.search.informal import InformalReranker

DIM = 64


class WordsEmbedder:
    """Unit bag-of-words vectors (each word hashed to one of DIM axes); counts the texts encoded."""

    name, revision, dim = "words", "r1", DIM

    def __init__(self):
        self.encoded: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.encoded.extend(texts)
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in re.findall(r"[a-z]+", t.lower()):
                out[i, hashlib.sha256(w.encode()).digest()[0] % DIM] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


ROWS = [  # name, facet, text
    ("Group.comm", "name_signature", "theorem Group.comm : a * b = b * a"),
    ("Group.comm", "informal", "Theorem Group.comm: multiplication of any two elements commutes."),
    ("Ring.zero", "informal", "Theorem Ring.zero: zero times anything is zero. Uses Group.comm: multiplication commutes"),
    ("Set.inter", "informal", "Theorem Set.inter: the intersection of two sets is contained in each."),
    ("Lonely", "docstring", "multiplication commutes in every group"),  # no informal rendering
]


def _texts(tmp_path):
    path = tmp_path / "embedding_texts.parquet"
    names, facets, texts = zip(*ROWS)
    pq.write_table(pa.table({"name": list(names), "facet": list(facets), "text": list(texts)}), path)
    return path


def test_candidates_come_back_by_the_cosine_of_their_informal_rendering(tmp_path):
    emb = WordsEmbedder()
    reranker = InformalReranker(_texts(tmp_path), emb.encode)
    query = emb.encode(["multiplication commutes"])[0]
    ranked = reranker.rerank(query, ["Set.inter", "Ring.zero", "Lonely", "Group.comm"])
    assert [n for n, _ in ranked] == ["Group.comm", "Ring.zero", "Set.inter"]  # Lonely has no rendering
    assert ranked[0][1] > ranked[1][1] > ranked[2][1]
    # the gloss of a used constant ("Uses Group.comm: ...") is not part of what is embedded
    assert reranker.text("Ring.zero") == "Theorem Ring.zero: zero times anything is zero."
    full = emb.encode([dict((n, t) for n, f, t in ROWS if f == "informal")["Ring.zero"]])[0]
    assert ranked[1][1] < float(full @ query)


def test_renderings_are_embedded_once_and_kept(tmp_path):
    emb = WordsEmbedder()
    reranker = InformalReranker(_texts(tmp_path), emb.encode, cache_size=2)
    query = emb.encode(["intersection of sets"])[0]
    emb.encoded.clear()
    first = reranker.rerank(query, ["Group.comm", "Set.inter"])
    assert len(emb.encoded) == 2
    assert reranker.rerank(query, ["Set.inter", "Group.comm"]) == first and len(emb.encoded) == 2
    reranker.rerank(query, ["Ring.zero"])  # the cache holds 2: the least recently used (Set.inter) goes
    assert len(emb.encoded) == 3
    reranker.rerank(query, ["Group.comm"])
    assert len(emb.encoded) == 3
    reranker.rerank(query, ["Set.inter"])
    assert len(emb.encoded) == 4


class _Lists:
    """A channel answering a fixed list, and (as the vector channel) encoding with an embedder."""

    def __init__(self, rows, embedder=None):
        self.rows, self.embedder = rows, embedder

    def hits(self, query, k):
        if self.embedder is not None:
            query.vector = self.embedder.encode([query.text])
        return self.rows[:k]


def _engine(tmp_path):
    emb = WordsEmbedder()
    engine = SearchEngine.__new__(SearchEngine)  # two fixed channel lists and the informal re-ranker
    engine.weights, engine.unavailable, engine.prior = {}, {}, {}
    names = [n for n, _, _ in ROWS]
    engine.known, engine.fields = frozenset(names), frozenset()  # the parent channel: no structure among them
    engine.resolver = IdentifierResolver(names, [[] for _ in names])
    engine.lexical = _Lists([("Set.inter", 1.0), ("Group.comm", 1.0), ("Ring.zero", 1.0)])
    engine.vector = _Lists([("Ring.zero", 0.9), ("Set.inter", 0.9), ("Group.comm", 0.9)], emb)
    engine.informal = InformalReranker(_texts(tmp_path), emb.encode)
    return engine


def test_prose_queries_get_the_informal_list_and_it_moves_the_fused_order(tmp_path):
    engine = _engine(tmp_path)
    query = "two elements under multiplication commute"
    results = engine.channel_hits(query)
    assert [n for n, _ in results["informal"]][0] == "Group.comm"
    assert weights_for("words")["informal"] > 0
    without = engine.rank(query, {c: h for c, h in results.items() if c != "informal"}, [], 3)
    assert [h.name for h in without.hits][0] != "Group.comm"
    hits = engine.rank(query, results, [], 3).hits
    assert hits[0].name == "Group.comm" and hits[0].channels["informal"] == 1


def test_formula_and_lean_queries_do_not_run_the_informal_channel(tmp_path):
    engine = _engine(tmp_path)
    assert "informal" not in engine.channel_hits("multiplication $a b = b a$ commutes")
    assert "informal" not in engine.channel_hits("`a * b = b * a` multiplication")
    engine.vector = None  # no query vector: no informal list either
    assert "informal" not in engine.channel_hits("two elements under multiplication commute")


def test_cache_reader_finds_what_lookup_finds_across_shards(tmp_path):
    from mathindex.embed.embedder import EmbeddingCache

    rng = np.random.default_rng(3)
    cache = EmbeddingCache(tmp_path, "words", "r1", 4)
    keys = np.array([rng.bytes(32) for _ in range(60)], dtype="S32")
    vecs = rng.standard_normal((60, 4)).astype(np.float32)
    cache.add(keys[:25], vecs[:25])
    reader = cache.reader()
    cache.add(keys[25:50], vecs[25:50])  # added after the reader was made: found after `refresh`
    want = np.concatenate([keys[::3], np.array([rng.bytes(32) for _ in range(5)], dtype="S32")])
    assert reader.get(want)[0].sum() == len([i for i in range(0, 60, 3) if i < 25])
    reader.refresh()
    found, got = reader.get(want)
    ref_found, ref = cache.lookup(want)
    assert found.tolist() == ref_found.tolist() and found.sum() == len(range(0, 50, 3))
    np.testing.assert_array_equal(got[found], ref)
    assert not got[~found].any()


def test_rendering_vectors_are_kept_in_the_store_for_the_next_process(tmp_path):
    from mathindex.embed.embedder import EmbeddingCache

    store_dir = tmp_path / "cache"
    emb = WordsEmbedder()
    query = emb.encode(["intersection of sets"])[0]
    emb.encoded.clear()
    first = InformalReranker(_texts(tmp_path), emb.encode, store=EmbeddingCache(store_dir, "words", "r1", DIM))
    ranked = first.rerank(query, ["Group.comm", "Set.inter", "Ring.zero"])
    assert len(emb.encoded) == 3 and first.stats["encoded"] == 3
    first.flush()
    again = InformalReranker(_texts(tmp_path), emb.encode, store=EmbeddingCache(store_dir, "words", "r1", DIM))
    assert again.rerank(query, ["Ring.zero", "Set.inter", "Group.comm"]) == ranked
    assert len(emb.encoded) == 3 and again.stats == {"lru": 0, "store": 3, "encoded": 0}
    # keyed by the text's sha256 in the embedder's own cache: a vector the embed stage stored is used
    other = EmbeddingCache(store_dir, "words", "r2", DIM)
    text = again.text("Set.inter")
    other.add(np.array([hashlib.sha256(text.encode()).digest()], dtype="S32"), emb.encode([text]))
    third = InformalReranker(_texts(tmp_path), emb.encode, store=other)
    emb.encoded.clear()
    third.rerank(query, ["Set.inter", "Group.comm"])
    assert emb.encoded == [third.text("Group.comm")]


def test_pending_vectors_are_written_when_the_reranker_goes(tmp_path):
    import gc

    from mathindex.embed.embedder import EmbeddingCache

    emb = WordsEmbedder()
    store = EmbeddingCache(tmp_path / "cache", "words", "r1", DIM)
    reranker = InformalReranker(_texts(tmp_path), emb.encode, store=store)
    reranker.rerank(emb.encode(["sets"])[0], ["Group.comm", "Set.inter"])
    assert store.shards() == []  # fewer than FLUSH_AT: still pending
    del reranker
    gc.collect()
    assert len(store.shards()) == 1 and len(np.load(store.shards()[0])) == 2


def test_warm_embeds_every_rendering_once(tmp_path):
    from mathindex.embed.embedder import EmbeddingCache

    emb = WordsEmbedder()
    store = EmbeddingCache(tmp_path / "cache", emb.name, emb.revision, DIM)
    counts = InformalReranker(_texts(tmp_path), emb.encode, store=store).warm(emb)
    assert counts["renderings"] == 3 and counts["embedded"] == 3  # Lonely has no rendering
    assert InformalReranker(_texts(tmp_path), emb.encode, store=store).warm(emb)["embedded"] == 0
    emb.encoded.clear()
    fresh = InformalReranker(_texts(tmp_path), emb.encode, store=store)
    fresh.rerank(emb.encode(["sets"])[0], ["Group.comm", "Set.inter", "Ring.zero", "Lonely"])
    assert fresh.stats["encoded"] == 0 and emb.encoded == ["sets"]


def test_warm_command_on_the_sample_release(sample_release_root, tmp_path, capsys):
    import json
    import shutil

    from mathindex.cli import main
    from mathindex.search.engine import SearchEngine
    from mathindex.store.layout import RootLayout
    from tests.serving import copy_root

    root = copy_root(sample_release_root, tmp_path / "root")  # releases, without the caches
    release = root / "releases" / json.loads((root / "published.json").read_text())["release_id"]
    embeddings = RootLayout(sample_release_root).caches.embeddings("x").parent
    shutil.copytree(embeddings, RootLayout(root).caches.embeddings("x").parent)
    # the release's embed stage embedded every rendering into its root's cache: nothing left to warm
    assert main(["warm", str(release)]) == 0
    built = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert built["renderings"] > 50 and built["embedded"] == 0 and built["cached"] == built["distinct"]
    made = json.loads((release / "manifest.json").read_text())["vector_index"]["embedding"]["renderings"]
    assert made["distinct"] == built["distinct"] and made["cached"] + made["embedded"] == built["distinct"]
    engine = SearchEngine(release)
    engine.search("every element of a group has an inverse", 10)
    assert engine.informal.stats["encoded"] == 0 and engine.informal.stats["store"] > 0
    # a root without that cache (a release built before, or a copied root): `warm` embeds them, once
    shutil.rmtree(RootLayout(root).cache)
    assert main(["warm", str(release)]) == 0
    first = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert first["embedded"] == first["distinct"] == built["distinct"]
    assert main(["warm", str(release)]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["embedded"] == 0


def test_the_embed_stage_embeds_every_rendering_into_the_channels_store(tmp_path):
    """`tasks.embed.warm_renderings`: what the informal channel would embed at query time (no
    glosses; a LaTeX body where a node has no rendering), in the store the channel reads."""
    from types import SimpleNamespace

    from mathindex.embed.embedder import EmbeddingCache
    from mathindex.tasks.embed import warm_renderings

    emb = WordsEmbedder()
    names, facets, texts = zip(*ROWS, ("Tex.lemma", "latex_body", "a lemma about sets"))
    table = pa.table({"name": list(names), "facet": list(facets), "text": list(texts)})
    counts = warm_renderings(table, SimpleNamespace(embedder=emb), tmp_path / "cache")
    assert (counts["renderings"], counts["embedded"]) == (4, 4)
    assert "Uses Group.comm" not in " ".join(emb.encoded)
    assert warm_renderings(table, SimpleNamespace(embedder=emb), tmp_path / "cache")["embedded"] == 0  # resumes
    pq.write_table(table, tmp_path / "embedding_texts.parquet")
    emb.encoded.clear()
    reranker = InformalReranker(tmp_path / "embedding_texts.parquet", emb.encode,
                                store=EmbeddingCache(tmp_path / "cache", emb.name, emb.revision, DIM))
    reranker.rerank(emb.encode(["sets"])[0], ["Group.comm", "Set.inter", "Ring.zero", "Tex.lemma", "Lonely"])
    assert reranker.stats["encoded"] == 0 and emb.encoded == ["sets"]


def test_a_lazy_reranker_reads_only_the_names_asked_and_ranks_as_the_whole_table(tmp_path):
    """`lazy` (a one-query engine): a name's rendering is read when first asked, with its glosses
    cut as the eager channel cuts them (`Ring.zero` has one), so the texts and ranks are the same."""
    query = WordsEmbedder().encode(["multiplication commutes"])[0]
    asked = [["Set.inter", "Ring.zero", "Lonely", "Group.comm"], ["Ring.zero", "Nobody"], ["Lonely"]]
    eager = InformalReranker(_texts(tmp_path), WordsEmbedder().encode)
    lazy = InformalReranker(_texts(tmp_path), WordsEmbedder().encode, lazy=True)
    assert lazy.has_renderings() and len(lazy) == 0  # nothing read yet
    for names in asked:
        assert lazy.rerank(query, names) == eager.rerank(query, names)
    assert len(lazy) == 3 and all(lazy.text(n) == eager.text(n) for n in ["Group.comm", "Ring.zero", "Set.inter", "Lonely"])
    assert "Uses" not in lazy.text("Ring.zero")
    path = tmp_path / "none.parquet"
    pq.write_table(pa.table({"name": ["A"], "facet": ["docstring"], "text": ["a"]}), path)
    assert not InformalReranker(path, WordsEmbedder().encode, lazy=True).has_renderings()
