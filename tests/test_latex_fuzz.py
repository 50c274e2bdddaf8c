"""Property: any text, however broken, yields rows and error tuples, never an exception, within its budget."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from mathindex.latex.macros import DEFAULT_ENVS, Macro, MacroSet
from mathindex.latex.tex import DocContext, LabelResolver, extract_tex_text
from mathindex.latex.texscan import strip_comments

PIECES = [
    "\\begin{lemma}", "\\end{lemma}", "\\begin{proof}", "\\end{proof}", "\\begin{equation}", "\\end{equation}",
    "\\begin{slogan}", "\\end{slogan}", "\\label{x}", "\\ref{y}", "\\cite{z}", "\\section{", "}", "{", "$", "$$",
    "\\(", "\\)", "\\[", "\\]", "\\\\", "%", "\\%", "\n", "\n\n", " a ", "\\def\\a{\\a\\a}", "\\a", "\\R",
    "\\newcommand{\\R}[1]{#1#1}", "[", "]", "\\begin{verbatim}", "\\end{verbatim}", "\\verb|$|", "\\iffalse", "\\fi",
]
CTX = DocContext(macros={"R": Macro("R", 0, None, "\\mathbf{R}", False)}, theorem_kinds=dict(DEFAULT_ENVS))
RESOLVER = LabelResolver(tags={}, file_prefixed=True, stems=frozenset({"f"}))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=5), max_size=80))
def test_extract_never_raises(parts):
    text = strip_comments("".join(parts))
    start = time.monotonic()
    result = extract_tex_text(text, "f.tex", "c", CTX, RESOLVER, budget_s=2.0)
    assert time.monotonic() - start < 5
    assert all(isinstance(line, (int, type(None))) and reason for line, reason in result.errors)
    for row in result.statements:
        assert 1 <= row["line_start"] <= row["line_end"] <= text.count("\n") + 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="\\ab{}#1[]", max_size=40))
def test_expansion_terminates(body):
    macros = MacroSet({"a": Macro("a", 1, None, body, True), "b": Macro("b", 0, "x", body, True)})
    try:
        out = macros.expand("\\a{\\b} \\b[\\a]{y}")
    except RuntimeError:
        return
    assert isinstance(out, str)
