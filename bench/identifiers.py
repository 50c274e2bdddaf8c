"""Benchmark: external identifiers of a whole Lean library (Mathlib) through the resolver.

Usage: .venv/bin/python -m bench.identifiers CORPUS RELEASE [--sample 50] [--seed 2026]

CORPUS is a laid-out Lean corpus root with its bibliography and curated lists (Mathlib:
docs/references.bib, docs/1000.yaml, docs/100.yaml); RELEASE a release of that corpus (its
declarations, descriptions and nodes tables; it need not have a citations table). The citations are
computed here with the stage's own functions (lean/citations.py) over CORPUS, their aliases added to
the release's nodes as the nodes stage adds them (search/nodes.py), and every query goes through the
engine's IdentifierResolver with the release's reference prior as its order. Prints:

- the count of each identifier kind (rows, distinct identifiers, declarations) and how citations came;
- every Wikidata QID of 1000.yaml whose entry names a declaration of the release, typed bare
  (`Q11518`) and as a URL: rank 1 must be a declaration of an entry with that QID;
- a seeded sample of bibliography entries with an identifier that a declaration cites, each
  identifier typed in a user's form (a doi.org URL, `arXiv:`, `MR`, `Zbl `): rank 1 must be a
  declaration that cites the entry; and as many entries no declaration cites: nothing, and a notice;
- the citations stage's time (wall and CPU seconds) with the CPU named.
"""

from __future__ import annotations

import argparse
import random
import resource
import time
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq

from bench.common.machine import cpu_model
from mathindex.corpusfiles import CorpusRoot, Refused, list_files, read_file
from mathindex.identifiers import from_bib, normal
from mathindex.lean import citations as cites
from mathindex.lean.descriptions import read_list_entries
from mathindex.lean.extract import MAX_FILE_BYTES
from mathindex.search.identifier import IdentifierResolver, unknown_identifier
from mathindex.search.nodes import identifier_aliases
from mathindex.search.prior import PRIOR, read_prior
from mathindex.store.layout import ReleaseLayout

# how a user types each kind in the citation sample (the parser's other forms are in the tests)
TYPED = {"doi": "https://doi.org/{}", "arxiv": "arXiv:{}", "mr": "{}", "zbl": "Zbl {}", "zbmath": "zbmath:{}",
         "oeis": "https://oeis.org/{}", "wikidata": "{}", "freek": "freek {}"}


def citations_of(corpus: Path, release: Path):
    """The citations table of `corpus` against the release's declarations and descriptions, the
    bibliography, the title list entries, and the stage's wall and CPU seconds."""
    layout = ReleaseLayout(release)
    decls = pq.read_table(layout.table("declarations"), columns=["full_name", "docstring", "file", "line_start"])
    described = pq.read_table(layout.table("descriptions"))
    wall, cpu = time.perf_counter(), time.process_time()
    bib = cites.read_bibliography(corpus)
    confined, cited = CorpusRoot.of(corpus), {}
    for rel, path in list_files(corpus, (".lean",)):
        try:
            data = read_file(confined, path, MAX_FILE_BYTES)
        except Refused:
            continue
        if b"/-!" in data and (found := cites.module_doc_mentions(data.decode("utf-8", errors="replace"), bib)):
            cited[rel] = found
    entries = read_list_entries(corpus)
    table = cites.citations_table(decls, described, bib, cited, entries)
    return table, bib, entries, time.perf_counter() - wall, time.process_time() - cpu


def resolver_of(release: Path, table) -> tuple[IdentifierResolver, list[str]]:
    """The release's nodes with the citations' aliases added, ordered by its reference prior; the names."""
    nodes_path = ReleaseLayout(release).table("nodes")
    nodes = pq.read_table(nodes_path, columns=["node_id", "name", "aliases"])
    names = nodes.column("name").to_pylist()
    extra = identifier_aliases(table)
    aliases = [a + extra.get(n, []) for n, a in zip(nodes.column("node_id").to_pylist(), nodes.column("aliases").to_pylist())]
    return IdentifierResolver(names, aliases, order=read_prior(nodes_path, PRIOR, names)), names


def kind_counts(rows: list[dict]) -> None:
    print("\n== identifier kinds (rows, distinct identifiers, declarations) ==")
    for kind in sorted({r["kind"] for r in rows if r["kind"]}):
        of = [r for r in rows if r["kind"] == kind]
        print(f"  {kind:9} {len(of):6} rows  {len({r['identifier'] for r in of}):5} identifiers  "
              f"{len({r['full_name'] for r in of}):5} declarations")
    print(f"  rows without an identifier (a cited work with none): {sum(1 for r in rows if not r['kind'])}")
    print("  rows by way: " + ", ".join(f"{v} {n}" for v, n in sorted(Counter(r["via"] for r in rows).items())))


def qid_check(resolver: IdentifierResolver, entries, names: set[str]) -> None:
    """Every QID of 1000.yaml with a declaration of the release: rank 1 among its entries' declarations."""
    expected: dict[str, set[str]] = defaultdict(set)
    listed = 0
    for e in entries:
        if e.scheme == "wikidata" and e.decls and (qid := normal("wikidata", e.key)) is not None:
            listed += 1
            expected[qid.value] |= {d for d in e.decls if d in names}
    expected = {q: s for q, s in expected.items() if s}
    print(f"\n== Wikidata QIDs of 1000.yaml ==\n  entries naming a declaration: {listed}; QIDs with one in the release: "
          f"{len(expected)}")
    for form in ("{}", "https://www.wikidata.org/wiki/{}"):
        misses = [q for q, gold in sorted(expected.items()) if (resolver.resolve(form.format(q)) or [None])[0] not in gold]
        print(f"  typed as {form.format('Q…')!r}: rank 1 correct {len(expected) - len(misses)}/{len(expected)}"
              + (f"; misses: {', '.join(misses[:10])}" if misses else ""))


def citation_sample(resolver: IdentifierResolver, rows: list[dict], bib, n: int, seed: int) -> None:
    """A seeded sample of cited entries with identifiers (rank 1 a citing declaration), and of
    uncited ones (nothing, and a notice)."""
    citing: dict[str, set[str]] = defaultdict(set)
    direct: dict[str, set[str]] = defaultdict(set)
    carried = {(r["kind"], r["identifier"]) for r in rows if r["kind"]}
    by_identifier: dict[tuple[str, str], set[str]] = defaultdict(set)  # two entries may share a DOI
    for r in rows:
        if r["kind"]:
            by_identifier[r["kind"], r["identifier"]].add(r["full_name"])
    for r in rows:
        if r["key"]:
            citing[r["key"]].add(r["full_name"])
            if r["via"] == cites.VIA_DOCSTRING:
                direct[r["key"]].add(r["full_name"])
    with_ids = {k: from_bib(e.fields) for k, e in bib.entries.items() if from_bib(e.fields)}
    cited = sorted(k for k in with_ids if k in citing)
    uncited = sorted(k for k in with_ids if k not in citing and not any((i.kind, i.value) in carried for i in with_ids[k]))
    rng = random.Random(seed)
    print(f"\n== bibliography ==\n  entries {len(bib.entries)}, with an identifier {len(with_ids)}, cited by a declaration "
          f"{len([k for k in bib.entries if k in citing])} (with an identifier {len(cited)}; in a docstring {len(direct)})")
    ok = same_work = first_direct = has_direct = 0
    by_kind = Counter()
    sample = rng.sample(cited, min(n, len(cited)))
    for key in sample:
        ident = rng.choice(with_ids[key])
        by_kind[ident.kind] += 1
        found = resolver.resolve(TYPED[ident.kind].format(ident.value))
        ok += bool(found) and found[0] in citing[key]
        same_work += bool(found) and found[0] in by_identifier[ident.kind, ident.value]
        if not (found and found[0] in citing[key]):
            print(f"  miss: {key} typed {TYPED[ident.kind].format(ident.value)!r}: rank 1 {found[:1]}, "
                  f"cited by {sorted(citing[key])[:3]}")
        if direct[key]:
            has_direct += 1
            first_direct += bool(found) and found[0] in direct[key]
    print(f"  sample of {len(sample)} cited entries (seed {seed}; typed as {', '.join(f'{k} {v}' for k, v in sorted(by_kind.items()))}):"
          f" rank 1 cites the entry {ok}/{len(sample)}, cites a work with that identifier {same_work}/{len(sample)}; of the {has_direct} a docstring cites, rank 1 is such a "
          f"docstring's declaration {first_direct}/{has_direct}")
    quiet = rng.sample(uncited, min(n, len(uncited)))
    said = sum(1 for key in quiet for i in [rng.choice(with_ids[key])]
               if not resolver.resolve(TYPED[i.kind].format(i.value)) and unknown_identifier(TYPED[i.kind].format(i.value)))
    print(f"  sample of {len(quiet)} entries no declaration cites: no node and a notice {said}/{len(quiet)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path)
    ap.add_argument("release", type=Path)
    ap.add_argument("--sample", type=int, default=50)
    ap.add_argument("--seed", type=int, default=2026)
    args = ap.parse_args()
    print(f"CPU: {cpu_model()}")
    table, bib, entries, wall, cpu = citations_of(args.corpus, args.release)
    rows = table.to_pylist()
    print(f"citations stage: {len(rows)} rows in {wall:.1f} s wall, {cpu:.1f} s CPU "
          f"(max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} MB for the whole script so far)")
    kind_counts(rows)
    resolver, names = resolver_of(args.release, table)
    qid_check(resolver, entries, set(names))
    citation_sample(resolver, rows, bib, args.sample, args.seed)


if __name__ == "__main__":
    main()
