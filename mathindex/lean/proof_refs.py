"""Proof references: the constants a declaration's proof or definition body names.

Read from source text without an elaborator, so this is a syntactic approximation. From the body
(everything after the signature's `:=`, `by`, `where` or `|`) it keeps the identifiers that are
not Lean keywords or tactic words and not local names. A name is local when

- the signature binds it (a binder, a `variable` in scope, a `∀`/`fun` in the type),
- the body binds it: `fun x`, `intro`/`rintro`/`obtain`/`rcases … with`/`cases … with`/
  `induction … with`/`choose`/`ext`/`case`/`next` patterns, `have`/`let`/`set`/`replace` names,
  `suffices h :`, `by_cases h :`, match arms `| succ n ih =>`, set-builder binders,
  structure-instance fields and named arguments (`toFun x := …`, `(config := …)`), and names
  that are not uses: `simp [-foo]` erasures, `+contextual` flags, `set_option` names,
- or it looks like one: a single letter with digits, subscripts or primes (`x`, `a₁`, `f'`), or a
  hypothesis name (`h`, `hx`, `hab'`, `H₂`, `ih`).

Binding is not scoped: a name bound anywhere in the body is local everywhere in it. Quantifier
binders in a proof (`∀ ε > 0,`) are not read: they bind names that look local anyway (on an
eighth of Mathlib, reading them removed 0.1 % of the references, at a tenth of this pass's cost). Tactic names
(`TACTIC_WORDS`) and keywords are never references; the fields and constructors a structure or
inductive type declares are not references of its own body (the scanner passes them as bound).

Dotted names: `x.foo` on a signature binder `x : T …` becomes `T.foo` (as for statements); on any
other local head (`hab.le`, `h.1`) it is dropped, since the head's type is unknown. A dotted name
on a constant (`le_antisymm_iff.trans`) is kept as written; `finalise` resolves it to its longest
prefix that names a corpus declaration (`le_antisymm_iff`).
"""

from __future__ import annotations

import re

from mathindex.lean.lexer import ATOM, KEYWORDS, LOCALISH, NAME, idents

# Tactic names and tactic-syntax words: never references. Words that are also constants used as
# terms (`rfl`, `trivial`, `absurd`, `id`, `funext`, `congrArg`) are not listed.
TACTIC_WORDS = frozenset("""
    abel abel1 abel_nf ac_rfl aesop aesop_cat all_goals and_intros any_goals apply apply_assumption
    apply_fun apply_mod_cast apply_rules apply? assumption assumption_mod_cast bound borelize
    by_cases by_contra by_contra! by_contra' calc cancel_denoms case case' cases cases' casesm
    change choose choose! classical clear clear_value compute_degree congr congr! congrm constructor
    constructorm continuity contradiction contrapose contrapose! conv conv_lhs conv_rhs convert
    convert_to decide decreasing_by decreasing_tactic decreasing_trivial delta done dsimp dsimp!
    eapply enter erw exact exact! exact? exact_mod_cast exacts exfalso exists existsi ext ext1
    extract_lets fail fapply field_simp filter_upwards fin_cases first focus fun_prop gcongr
    generalize generalizing group haveI induction induction' infer_instance inhabit interval_cases
    intro intros introv iterate left lhs lift lift_lets linarith linarith! linear_combination
    measurability mod_cases module mono native_decide next nlinarith nlinarith! noncomm_ring
    nontriviality norm_cast norm_num norm_num1 nth_rewrite nth_rw obtain omega on_goal only peel
    pick_goal positivity push_cast push_neg qify rcases refine refine' rel rename rename_i repeat
    replace revert rewrite rfl' rhs rify right ring ring1 ring_nf rintro rsuffices rw rw? rw_mod_cast
    rwa says set show_term simp simp? simp_all simp_all? simp_arith simp_intro simp_rw simp_wf
    simpa simpa? skip sorry specialize split split_ands split_ifs stop subsingleton subst
    subst_vars suffices swap symm tauto tfae_finish tfae_have trans unfold unfold_let use use!
    using wlog zify letI nofun nomatch termination_by aesop? bv_omega fin_omega gcongr?
    positivity? observe polyrith plausible slim_check itauto cc norm_fin reduce whnf beta_reduce
    to generalizing fconstructor exists_intro match_target guard_target guard_hyp set_option
    convert! using! grind lia grw cat_disch mod_cast contextual field push algebraize finiteness
    injection guard simp! rw! clear! wlog! by_cases! repeat' singlePass fast_instance on as
    protected private scoped unsafe panic! unreachable! m! s! f!
    """.split())

# one bracket group, with at most one nested level: `(x : T)`, `⟨x, ⟨y, hy⟩⟩`
_GROUP = r"[(\[{⦃⟨](?:[^()\[\]{}⦃⦄⟨⟩\n]|[(\[{⦃⟨][^()\[\]{}⦃⦄⟨⟩\n]*[)\]}⦄⟩])*[)\]}⦄⟩]"
# a run of binding patterns: names, bracket groups, `|`, `-`, `@`, up to `:`, `:=`, `=>`, `↦`, `;`,
# a newline or one of the words `using`, `at`, `generalizing`, `with`, `in`
_RUN = (r"((?:[^\S\n]+|" + _GROUP + r"|(?!(?:using|at|generalizing|with|in)(?![\w'!?]))"
        r"[^\s()\[\]{}⦃⦄⟨⟩:;=↦,·]+)*)")


def _words(words: str) -> str:
    """An alternation of whole words, none preceded by an identifier character, `.`, `'`, `!` or `?`
    (each word checks what precedes it after matching: a leading look-behind would cost the regex
    engine its fast literal-prefix scan, three times slower here)."""
    return "(?:" + "|".join(re.escape(w) + r"(?<![\w.'!?]" + re.escape(w) + ")" for w in words.split()) + r")(?![\w'!?])"


_PATTERN_WORDS = ("fun λ intro intros rintro introv rename_i next case case' ext ext1 obtain have haveI let letI "
                  "set replace choose choose! by_contra by_contra! by_contra' with")
_PATTERNS = re.compile(_words(_PATTERN_WORDS) + _RUN)
_PATTERN_WORD_SET = frozenset(_PATTERN_WORDS.split())
_NAMED_HYP_WORDS = ("suffices", "by_cases", "generalize", "wlog")  # (substrings checked first)
_NAMED_HYP = re.compile(_words("suffices by_cases generalize wlog rsuffices") + r"[^\S\n]+(" + ATOM + r")[ \t]*:(?!=)")
_ARM = re.compile(r"\|([^|\n=]*)=>")
# what precedes a `:=` that defines a field or names an argument: `toFun (x : α)`, `config`
_FIELD_HEAD = re.compile(r"[ \t]*(" + ATOM + r"(?:[ \t]+(?:" + ATOM + r"|" + _GROUP + r"))*)[ \t]*")
_FIELD_OPENERS = re.compile(r".*[{(,⟨]")
_SET_BUILDER = re.compile(r"\{[ \t]*(" + ATOM + r"(?:[ \t]+" + ATOM + r")*)[ \t]*(?:\||:(?!=)|∈)")
# `(a b : T)` in a structure's fields or a constructor's type (in a proof, `(foo x : T)` is an
# ascription, so this is used for types only)
_BINDER_GROUP = re.compile(r"[({⦃\[][ \t]*(" + ATOM + r"(?:[ \t]+" + ATOM + r")*)[ \t]*:(?!=)")
_OPTION = re.compile(r"set_option[ \t]+(\S+)")
# not uses: a lemma erased from a simp set (`simp [-foo]`), a configuration flag (`simp +contextual`)
# (two patterns, each led by rare characters, scan faster than one led by any space)
_ERASED = re.compile(r"[\[,][ \t]*-(" + NAME.pattern + r")")
_FLAG = re.compile(r" \+(" + NAME.pattern + r")")
_ASCRIPTION = re.compile(r":[^()\[\]{}⦃⦄⟨⟩,|]*")
_HYPOTHESIS = re.compile(r"^(?:h|H|ih|IH)[A-Za-z]{0,4}[\d₀-₉'!?ₐ-ₜᵢ-ᵪⱼ]*$")
_POSTFIX = re.compile(r"(?:ᵒᵈ|ᵐᵒᵖ|ᵃᵒᵖ|ᵒᵖ|ᵀ|ᴴ|ᶜ|ᵛ)+$")  # notations written onto a name: `αᵒᵈ`, `Cᵒᵖ`, `Aᵀ`
_NOT_BINDERS = frozenset({"_", "-"})  # (`rfl` in a pattern substitutes: not a reference either)


def body_bound(body: str, type_like: bool = False, names: dict[str, None] | None = None) -> set[str]:
    """Names the body binds itself (see the module doc), undotted; with `type_like` (the fields of
    a structure, the constructors of an inductive type) also the names of binder groups. `names`:
    the body's identifiers when known, to skip the scan for binding words none of them is."""
    caps: list[str] = []
    if names is None or "λ" in body or not _PATTERN_WORD_SET.isdisjoint(names):
        caps.extend(m for m in _PATTERNS.findall(body) if m.strip())
    if type_like:
        caps.extend(_BINDER_GROUP.findall(body))
    if "=>" in body:
        caps.extend(m for m in _ARM.findall(body) if m.strip())
    if ":=" in body:
        caps.extend(field_definitions(body))
    if "{" in body:
        caps.extend(_SET_BUILDER.findall(body))
    out = set(_NAMED_HYP.findall(body)) if any(w in body for w in _NAMED_HYP_WORDS) else set()
    if caps:  # all captures at once (`,` ends a type ascription): names, not the types ascribed to them
        text = " , ".join(caps)
        out.update(n for n in idents(_ASCRIPTION.sub(" ", text) if ":" in text else text) if "." not in n)
    if "set_option" in body:
        out.update(_OPTION.findall(body))
    if "[-" in body or ",-" in body or ", -" in body or "[ -" in body:
        out.update(_ERASED.findall(body))
    if "+" in body:
        out.update(_FLAG.findall(body))
    return out - _NOT_BINDERS


def field_definitions(body: str) -> list[str]:
    """What stands before each `:=` that starts a line or follows `{`, `(`, `,` or `⟨` when it is
    names and binder groups only: a structure-instance field with its binders, a named argument."""
    out = []
    i = body.find(":=")
    while i >= 0:
        line_start = body.rfind("\n", 0, i) + 1
        m = _FIELD_HEAD.fullmatch(body, line_start, i)
        if m is None:
            o = _FIELD_OPENERS.match(body, line_start, i)
            m = _FIELD_HEAD.fullmatch(body, o.end(), i) if o else None
        if m is not None:
            out.append(m.group(1))
        i = body.find(":=", i + 2)
    return out


def is_local_looking(name: str) -> bool:
    """A variable-like (`x`, `a₁`, also under a postfix notation: `αᵒᵈ`) or hypothesis-like (`h`,
    `hx`, `hab'`, `ih`) name."""
    return bool(LOCALISH.match(name) or _HYPOTHESIS.match(name) or LOCALISH.match(_POSTFIX.sub("", name)))


def proof_references(body: str, sig_bound: set[str], heads: dict[str, str | None],
                     var_heads: dict[str, str | None], statement: list[str],
                     type_like: bool = False) -> list[str]:
    """Constants the body names, as written, first appearance first, none of `statement`.

    `sig_bound`: names the signature binds; `heads`: binder name -> head constant of its type
    (signature binders, then `var_heads` for `variable`s in scope)."""
    names = dict.fromkeys(idents(body))
    if not names:
        return []
    unknown = names.keys() - _NEVER - _PLAIN - _DOTTED
    for d in unknown:  # each name is classified once per process (names repeat across a corpus)
        (_NEVER if d in KEYWORDS or d in TACTIC_WORDS else _DOTTED if "." in d
         else _NEVER if is_local_looking(d) else _PLAIN).add(d)
    # set operations, not a loop, decide the plain names; dotted ones are few
    skip = set(statement)
    keep = (names.keys() & _PLAIN) - sig_bound - var_heads.keys() - skip
    maybe_dotted = (names.keys() & _DOTTED) - skip
    if not keep and not maybe_dotted:
        return []  # (most short bodies: no need to look for binding sites)
    local = body_bound(body, type_like, names)
    keep -= local
    dotted = {}
    for d in maybe_dotted:
        head, _, rest = d.partition(".")
        if head in sig_bound or head in var_heads:
            if head not in local:  # `x.foo` on a binder `x : T …` is `T.foo`
                t = heads.get(head) if head in heads else var_heads.get(head)
                if t and t + "." + rest not in skip:
                    dotted[d] = t + "." + rest
        elif head not in local and not is_local_looking(head):
            dotted[d] = d
    if not dotted:
        return [d for d in names if d in keep]
    return list(dict.fromkeys(d if d in keep else dotted[d] for d in names if d in keep or d in dotted))


# what each name seen so far is, before its context is known: never a reference (a keyword, a
# tactic word, a local-looking name), a plain name, or a dotted one (its head decides)
_NEVER: set[str] = set()
_PLAIN: set[str] = set()
_DOTTED: set[str] = set()
