"""External identifiers: every form a user types (mathindex/identifiers.py), the BibTeX reader
(mathindex/bibtex.py), and the resolver over the sample's citations (search/identifier.py): the node
an identifier names comes first, and one the release lacks gets a notice and nothing fuzzy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mathindex.bibtex import parse_bib
from mathindex.identifiers import Identifier, from_bib, in_text, normal, not_found, parse
from mathindex.lean import extract_lean_tree
from mathindex.search.identifier import IdentifierResolver, unknown_identifier
from mathindex.search.nodes import build_nodes
from mathindex.sources import pin_source, sources_from_dirs

SAMPLE_LEAN = Path(__file__).resolve().parents[1] / "data" / "sample" / "lean"

TYPED = [
    ("Q11518", "wikidata:Q11518"),
    ("wikidata:Q11518", "wikidata:Q11518"),
    ("https://www.wikidata.org/wiki/Q11518", "wikidata:Q11518"),
    ("Q180345X", "wikidata:Q180345"),  # a 1000+ list's second entry for the same item
    ("freek 11", "freek:11"),
    ("freek:011", "freek:11"),
    ("100 theorems #4", "freek:4"),
    ("A000010", "oeis:A000010"),
    ("oeis:A000010", "oeis:A000010"),
    ("https://oeis.org/A000010", "oeis:A000010"),
    ("arXiv:2106.01234", "arxiv:2106.01234"),
    ("2106.01234v2", "arxiv:2106.01234"),
    ("arxiv 0704.0001", "arxiv:0704.0001"),
    ("https://arxiv.org/abs/2106.01234", "arxiv:2106.01234"),
    ("https://arxiv.org/pdf/2106.01234v3.pdf", "arxiv:2106.01234"),
    ("math.AG/0412512", "arxiv:math/0412512"),
    ("arXiv:hep-th/9901001v1", "arxiv:hep-th/9901001"),
    ("10.1007/978-1-4684-9884-4", "doi:10.1007/978-1-4684-9884-4"),
    ("https://doi.org/10.1007/978-1-4684-9884-4", "doi:10.1007/978-1-4684-9884-4"),
    ("doi:10.1112/JLMS/s2-31.2.295", "doi:10.1112/jlms/s2-31.2.295"),
    ("https://dx.doi.org/10.1016%2F0022-4049(93)90035-R", "doi:10.1016/0022-4049(93)90035-r"),
    ("MR0344216", "mr:MR0344216"),
    ("MR 344216", "mr:MR0344216"),
    ("mr:MR0344216", "mr:MR0344216"),
    ("https://mathscinet.ams.org/mathscinet-getitem?mr=344216", "mr:MR0344216"),
    ("Zbl 0273.12001", "zbl:0273.12001"),
    ("zbMATH 0273.12001", "zbl:0273.12001"),
    ("https://zbmath.org/?q=an:0273.12001", "zbl:0273.12001"),
    ("zbmath:783754", "zbmath:783754"),
    ("`Q11518`", "wikidata:Q11518"),
]


@pytest.mark.parametrize("typed,alias", TYPED)
def test_every_typed_form_has_one_normal_form(typed, alias):
    found = parse(typed)
    assert found is not None and found.alias == alias
    assert parse(found.alias) == found  # the normal form reads back as itself


@pytest.mark.parametrize("query", ["Nat.Prime", "0BCD", "MA03", "ring", "12345", "3.14159", "2113.01234",
                                   "0704.00011", "1501.0001", "Q0", "A00001", "lemma-foo", "sum of divisors",
                                   "10.5/x", "MR", "x ^ 2"])
def test_what_is_not_an_identifier_is_left_to_the_channels(query):
    assert parse(query) is None


def test_normal_forms_of_each_kind():
    assert normal("doi", "10.5555/ABC.") == Identifier("doi", "10.5555/abc")
    assert normal("arxiv", "1412.1234") == Identifier("arxiv", "1412.1234")
    assert normal("arxiv", "1501.1234") is None  # from 2015 on, five digits
    assert normal("mr", "0") is None and normal("zbl", "273.12001") is None and normal("freek", "0") is None
    assert not_found(Identifier("doi", "10.5555/x")) == "no DOI 10.5555/x in this release"


def test_identifiers_written_in_prose():
    text = ("The Catalan numbers (http://oeis.org/A000108), see https://arxiv.org/abs/1707.00328v1. and\n"
            "arXiv:math/0412512, doi:10.1016/j.aim.2013.01.011. MR 1234567, Zbl. 0273.12001, OEIS A000045; "
            "again https://arxiv.org/abs/1707.00328.")
    found = in_text(text)
    assert [i.alias for _, i in found] == ["oeis:A000108", "arxiv:1707.00328", "arxiv:math/0412512",
                                           "doi:10.1016/j.aim.2013.01.011", "mr:MR1234567", "zbl:0273.12001",
                                           "oeis:A000045"]
    assert text[found[2][0]:].startswith("arXiv:math/0412512")
    assert in_text("A000010 and 2106.01234 and 10.1007/x written bare are not taken from prose") == []


def test_bibtex_reads_what_bibtex_reads():
    text = """# a comment outside entries, as in Mathlib's file, with an @ sign
@String{ jsm = "Journal of " # {Sample} }
@Book{            key_one,
  title         = {Nested {B}races, and commas},
  author        = "Fixture, Ada and {\\"U}ber, B.",
  journal       = jsm # " Mathematics",
  year          = 1999,
  doi           = {https://doi.org/10.5555/ONE},
  mrnumber      = {344216},
}
@comment{ @Book{hidden, doi = {10.5555/hidden}} }
@Article(key_two, eprint = {2106.01234}, archiveprefix = {arXiv}, zbl = {0273.12001})
@Book{broken, title = {never closed
@Misc{key_three, title = {after the broken one}}
@Book{key_one, title = {a second entry with the first one's key}}
"""
    bib = parse_bib(text)
    assert set(bib.entries) == {"key_one", "key_two", "key_three"} and bib.skipped == 1
    one = bib.entries["key_one"]
    assert one.type == "book" and one.line == 3 and one.fields["title"] == "Nested Braces, and commas"
    assert one.fields["journal"] == "Journal of Sample Mathematics" and one.fields["year"] == "1999"
    assert [i.alias for i in from_bib(one.fields)] == ["doi:10.5555/one", "mr:MR0344216"]
    assert [i.alias for i in from_bib(bib.entries["key_two"].fields)] == ["arxiv:2106.01234", "zbl:0273.12001"]
    assert from_bib(bib.entries["key_three"].fields) == []


@pytest.fixture(scope="module")
def sample():
    return extract_lean_tree(SAMPLE_LEAN, "sample-lean")


def test_citations_of_the_sample(sample):
    rows = sample.citations.to_pylist()
    assert sample.citations.schema.names == ["node_id", "full_name", "via", "key", "kind", "identifier", "file", "line"]
    by = {(r["full_name"], r["via"], r["kind"]): r for r in rows}
    totient = by["MiniMath.Nat.totient", "docstring", "doi"]
    assert totient["key"] == "sampleDivisors2026" and totient["identifier"] == "10.5555/mathindex.sample.divisors"
    assert totient["node_id"] == "lean:MiniMath.Nat.totient" and totient["file"] == "MiniMath/NumberTheory/Divisors.lean"
    assert {by["MiniMath.Nat.totient", "docstring", k]["identifier"] for k in ("mr", "zbl", "oeis")} == {
        "MR9999901", "9999.11001", "A000010"}
    assert by["MiniMath.Nat.totient", "docstring", "oeis"]["key"] is None  # written out, not cited by key
    assert by["MiniMath.mul_left_cancel", "docstring", "arxiv"]["identifier"] == "2512.99901"
    notes = by["MiniMath.le_antisymm", "docstring", None]  # a work without an identifier is still cited
    assert notes["key"] == "sampleNotes2024" and notes["identifier"] is None
    # the module doc's reference is credited to what the file's module doc describes
    credited = {r["full_name"] for r in rows if r["via"] == "module_doc" and r["kind"] == "arxiv"}
    assert credited == {"MiniMath.geom_sum_eq", "MiniMath.Finset.sum_range_id_mul_two", "MiniMath.sum_mul_sq_le_sq_mul_sq",
                        "MiniMath.hasSum_geometric_of_lt_one"}
    assert {r["identifier"] for r in rows if r["via"] == "module_doc"} == {"math/9912999", "10.5555/mathindex.sample.series"}
    wikidata = sorted((r["full_name"], r["identifier"], r["line"]) for r in rows if r["kind"] == "wikidata")
    assert wikidata == [("MiniMath.Nat.exists_infinite_primes", "Q1506253", 5), ("MiniMath.Nat.gcdA", "Q513028", 15),
                        ("MiniMath.Nat.gcd_eq_gcd_ab", "Q513028", 9), ("MiniMath.Nat.xgcd", "Q513028", 9)]
    assert {(r["full_name"], r["identifier"]) for r in rows if r["kind"] == "freek"} == {
        ("MiniMath.Nat.exists_infinite_primes", "11"), ("MiniMath.Nat.gcd_eq_gcd_ab", "60"),
        ("MiniMath.geom_sum_eq", "66"), ("MiniMath.hasSum_geometric_of_lt_one", "66")}
    assert not any(r["key"] == "sampleUncited2020" for r in rows) and "Q11518" not in {r["identifier"] for r in rows}


@pytest.fixture(scope="module")
def resolver(sample):
    nodes = build_nodes(sample.declarations, None, sample.dependencies, sample.citations)
    prior = dict(zip(nodes.column("name").to_pylist(), nodes.column("in_degree").to_pylist()))
    return IdentifierResolver(nodes.column("name").to_pylist(), nodes.column("aliases"), order=prior), prior


@pytest.mark.parametrize("query,first", [
    ("Q1506253", "MiniMath.Nat.exists_infinite_primes"),
    ("wikidata:Q1506253", "MiniMath.Nat.exists_infinite_primes"),
    ("freek 11", "MiniMath.Nat.exists_infinite_primes"),
    ("A000010", "MiniMath.Nat.totient"),
    ("https://oeis.org/A000010", "MiniMath.Nat.totient"),
    ("arXiv:2512.99901", "MiniMath.mul_left_cancel"),
    ("2512.99901v2", "MiniMath.mul_left_cancel"),
    ("https://arxiv.org/abs/2512.99901", "MiniMath.mul_left_cancel"),
    ("10.5555/mathindex.sample.divisors", "MiniMath.Nat.totient"),
    ("https://doi.org/10.5555/MATHINDEX.SAMPLE.DIVISORS", "MiniMath.Nat.totient"),
    ("MR9999901", "MiniMath.Nat.totient"),
    ("Zbl 9999.11001", "MiniMath.Nat.totient"),
])
def test_the_resolver_returns_the_node_an_identifier_names_first(resolver, query, first):
    found = resolver[0].resolve(query)
    assert found[0] == first
    assert unknown_identifier(query) is not None  # the engine asks for it only when nothing resolved


def test_several_nodes_of_one_identifier_come_most_referenced_first(resolver):
    r, prior = resolver
    found = r.resolve("Q513028")
    assert set(found) == {"MiniMath.Nat.gcd_eq_gcd_ab", "MiniMath.Nat.xgcd", "MiniMath.Nat.gcdA"}
    assert [prior[n] for n in found] == sorted((prior[n] for n in found), reverse=True)
    assert set(r.resolve("math.CA/9912999")) == set(r.resolve("doi:10.5555/mathindex.sample.series")) == {
        "MiniMath.geom_sum_eq", "MiniMath.Finset.sum_range_id_mul_two", "MiniMath.sum_mul_sq_le_sq_mul_sq",
        "MiniMath.hasSum_geometric_of_lt_one"}


@pytest.mark.parametrize("query,notice", [
    ("Q11518", "no Wikidata item Q11518 in this release"),  # listed in the sample's 1000.yaml without a declaration
    ("10.5555/mathindex.sample.uncited", "no DOI 10.5555/mathindex.sample.uncited in this release"),  # in the bib, cited by none
    ("Zbl 9999.00001", "no zbMATH review Zbl 9999.00001 in this release"),
    ("A999999", "no OEIS sequence A999999 in this release"),
    ("arXiv:2106.01234", "no arXiv paper 2106.01234 in this release"),
    ("MR0344216", "no MathSciNet review MR0344216 in this release"),
    ("freek 70", "entry 70 of Freek's 100 theorems in this release".replace("entry", "no entry")),
])
def test_an_identifier_the_release_lacks_says_so_and_resolves_to_nothing(resolver, query, notice):
    assert resolver[0].resolve(query) == []
    assert unknown_identifier(query) == notice


def test_the_corpus_pin_covers_the_lists_and_the_bibliography(tmp_path):
    """A release id moves when only a curated list or the bibliography changes: they are inputs."""
    corpus = tmp_path / "lean"
    shutil.copytree(SAMPLE_LEAN, corpus)
    before = pin_source(sources_from_dirs([corpus], [])[0])
    for rel in ("docs/1000.yaml", "docs/references.bib"):
        path = corpus / rel
        path.write_text(path.read_text() + "\n")
        after = pin_source(sources_from_dirs([corpus], [])[0])
        assert after.sha256 != before.sha256, rel
        assert after.files == before.files
        before = after
