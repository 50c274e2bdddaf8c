"""The corpus-wide pass over raw per-file rows: names of generated declarations (anonymous
instances, `@[to_additive]`/`@[to_dual]` twins, `attribute [...]` targets), decl ids and the
dependency edges table."""

from __future__ import annotations

import hashlib
import json
import logging

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.lean import names as guess
from mathindex.lean.instances import Lookup, instance_name, resolve, resolve_in_opened
from mathindex.lean.scanner import STAGE
from mathindex.schemas.common import ERRORS, error_row
from mathindex.schemas.lean import DECLARATIONS, DEPENDENCIES, ROLE_PROOF, ROLE_STATEMENT

log = logging.getLogger(__name__)


def _twin_name(src: str, spec: str, translations: dict[str, str]) -> str:
    """Target name of a twin: explicit (relative to the translated namespace) or guessed."""
    kind, _, explicit = spec.partition(":")
    if kind == "reassoc":
        return src + "_assoc"
    if kind == "simps":
        return src + "_" + explicit
    if kind == "ext":
        return src + "_iff"
    if kind == "ext_struct":
        return src + ".ext"
    if kind == "ext_struct_iff":
        return src + ".ext_iff"
    guesser = guess.additive_name if kind == "to_additive" else guess.dual_name
    pre, _, last = src.rpartition(".")
    pre_parts = pre.split(".") if pre else []
    # translate the longest namespace prefix that has a translation itself
    for i in range(len(pre_parts), 0, -1):
        p = ".".join(pre_parts[:i])
        if p in translations:
            pre_parts = translations[p].split(".") + pre_parts[i:]
            break
    if explicit:
        if explicit.startswith("_root_."):
            return explicit[7:]
        k = explicit.count(".") + 1
        keep = pre_parts[: max(0, len(pre_parts) - (k - 1))]
        return ".".join(keep + [explicit])
    return ".".join(pre_parts + [guesser(last)])


def finalise(raw: pa.Table, corpus: str) -> tuple[pa.Table, pa.Table, pa.Table]:
    """(declarations, dependencies, errors) from the raw rows of a whole corpus."""
    full = raw["full_name"].to_pylist()
    modules = raw["module"].to_pylist()
    files = raw["file"].to_pylist()
    exists_set = {n for n in full if n}
    module_of: dict[str, str] = {}
    for n, m in zip(full, modules):
        if n and n not in module_of:
            module_of[n] = m
    typeish = raw.filter(pc.is_in(raw["kind"], pa.array(["class", "structure", "def", "abbrev", "inductive"])))
    needy = pc.or_(pc.match_substring(typeish["signature"], "["), pc.match_substring(typeish["variables"], "["))
    needs = set(pc.filter(typeish["full_name"], needy).to_pylist())
    prop_classes = set(pc.filter(typeish["full_name"], pc.and_(
        pc.equal(typeish["kind"], "class"), pc.match_substring_regex(typeish["signature"], r":\s*Prop$"))).to_pylist())
    texts: dict[str, str] = {}
    for n, sig, var in zip(pc.filter(typeish["full_name"], needy).to_pylist(),
                           pc.filter(typeish["signature"], needy).to_pylist(),
                           pc.filter(typeish["variables"], needy).to_pylist()):
        texts.setdefault(n, sig + " " + var)
    lookup = Lookup(exists_set.__contains__, module_of.get, needs.__contains__,
                    prop_classes.__contains__, lambda n: texts.get(n, ""))
    errors: list[dict] = []

    inst_json = raw["_inst"].to_pylist()
    origins = raw["origin"].to_pylist()
    groups = raw["statement_group"].to_pylist()
    lines = raw["line_start"].to_pylist()
    instance_of_group: dict[tuple[str, str], str] = {}
    taken: set[str] = set(exists_set)
    for i, h in enumerate(inst_json):
        if h is None or origins[i] not in ("instance_name", "deriving"):
            continue
        hint = json.loads(h)
        if "resolve_type" in hint:  # `deriving instance C for T`: T as written, resolve it now
            tname, tns, topens = hint.pop("resolve_type")
            cls = hint["type"].split(" ", 1)[0]
            hint["type"] = f"{cls} _root_.{resolve(tname, tns, topens, lookup.exists) or tname}"
        try:
            base = instance_name(hint, modules[i], lookup)
        except (ValueError, IndexError, KeyError, RecursionError) as exc:
            errors.append(error_row(corpus, files[i], lines[i], STAGE, f"instance naming failed: {exc}"))
            base = "inst"
        ns = hint["ns"]
        name = f"{ns}.{base}" if ns else base
        k = 1
        while name in taken:  # Lean's mkUnusedBaseName
            name = (f"{ns}." if ns else "") + f"{base}_{k}"
            k += 1
        taken.add(name)
        full[i] = name
        instance_of_group[(files[i], groups[i])] = name

    srcs = raw["_twin_src"].to_pylist()
    specs = raw["_twin_tgt"].to_pylist()
    resolves = raw["_resolve"].to_pylist()
    twin_rows = [i for i, s in enumerate(specs) if s is not None]
    src_of: dict[int, str | None] = {}
    for i in twin_rows:
        src = srcs[i] or None
        if resolves[i]:
            name, ns, opens = json.loads(resolves[i])
            # a name the corpus does not declare comes from outside (Lean core): take it as written
            src = resolve(name, ns, opens, lookup.exists) or name.removeprefix("_root_.")
        elif not src:
            src = instance_of_group.get((files[i], groups[i]))
        src_of[i] = src
    translations: dict[str, dict[str, str]] = {"to_additive": {}, "to_dual": {}}
    for _ in range(2):  # second round sees namespace translations made by the first
        new: dict[str, dict[str, str]] = {"to_additive": {}, "to_dual": {}}
        for i in twin_rows:
            kind = specs[i].partition(":")[0]
            if src_of[i] and kind in new:
                new[kind][src_of[i]] = _twin_name(src_of[i], specs[i], translations[kind])
        translations = new
    named_twin: dict[tuple[str, str, str], str] = {}  # (file, group, to_additive|to_dual) -> name
    for i in twin_rows:
        kind, _, rest = specs[i].partition(":")
        spec = specs[i]
        if "@" in kind:  # an attribute given to a twin through (attr := ...): apply to the twin
            kind, parent = kind.split("@", 1)
            src_of[i] = named_twin.get((files[i], groups[i], parent))
            spec = kind + ":" + rest
            if not src_of[i]:
                continue
        if not src_of[i]:
            errors.append(error_row(corpus, files[i], lines[i], STAGE, "generated declaration: source name not found"))
            continue
        name = _twin_name(src_of[i], spec, translations.get(kind, {}))
        if kind in ("to_additive", "to_dual"):
            named_twin[(files[i], groups[i], kind)] = name
        # a twin that is its own source or that the corpus declares anyway adds no name
        if name != src_of[i] and name not in taken:
            full[i] = name
            taken.add(name)

    named = pa.array([bool(n) for n in full])
    full_arr = pa.array(full, pa.string())
    ids = [
        hashlib.sha256(f"{corpus}\0{m}\0{n}\0{ln}".encode()).hexdigest()[:16]
        for m, n, ln in zip(modules, full, lines)
    ]
    table = raw.set_column(raw.schema.get_field_index("full_name"), "full_name", full_arr)
    table = table.append_column("decl_id", pa.array(ids, pa.string()))
    table = table.filter(named)
    decls = table.select(DECLARATIONS.names).cast(DECLARATIONS)

    deps = _dependencies(table, corpus, {n for n in full if n})
    return decls, deps, pa.Table.from_pylist(errors, schema=ERRORS)


class _Resolver:
    """Resolution of written names through the namespace and `open`s in force (also an `open`
    relative to the namespace: `resolve_in_opened`), memoised per context.

    A target whose last component ends no corpus name cannot resolve (checked column-wise first).
    A proof reference that does not resolve falls back to its longest resolving prefix, so a
    dotted name on a constant (`le_antisymm_iff.trans`, `Foo.rec`) refers to that constant."""

    def __init__(self, table: pa.Table, names: set[str]):
        self.ns_col = table["_ns"].to_pylist()
        self.opens_col = table["_opens"].to_pylist()
        self.exists = names.__contains__
        # a `protected` name is never reached from its last component alone (through the
        # namespace or an `open`): `zero_mul` inside `namespace Matrix` is the root `zero_mul`
        protected = set(pc.filter(table["full_name"], table["is_protected"]).to_pylist())
        self.exists_short = (names - protected).__contains__
        self.lasts = pa.array(list({n.rpartition(".")[2] for n in names}), pa.string())
        self.contexts: dict[tuple[str, str], tuple[list[str], dict[str, str | None]]] = {}

    def maybe(self, flat: pa.Array) -> list[bool]:
        """For each written name: may it resolve at all (its last component ends a corpus name)?"""
        last_of = pc.struct_field(pc.extract_regex(flat, r"(?P<last>[^.]*)$"), [0])
        return pc.fill_null(pc.is_in(last_of, value_set=self.lasts), False).to_pylist()

    def __call__(self, target: str, parent: int) -> str | None:
        ctx = (self.ns_col[parent], self.opens_col[parent])
        entry = self.contexts.get(ctx)
        if entry is None:
            entry = self.contexts[ctx] = (json.loads(ctx[1]) if ctx[1] else [], {})
        memo = entry[1]
        full = memo.get(target, False)
        if full is False:
            exists = self.exists if "." in target else self.exists_short
            full = memo[target] = (resolve(target, ctx[0], entry[0], exists)
                                   or resolve_in_opened(target, ctx[0], entry[0], exists))
        return full

    def prefix(self, target: str, parent: int) -> str | None:
        """The longest proper prefix of a dotted `target` that resolves, if any."""
        while "." in target:
            target = target.rpartition(".")[0]
            full = self(target, parent)
            if full is not None:
                return full
        return None


def _dependencies(table: pa.Table, corpus: str, names: set[str]) -> pa.Table:
    """One row per (declaration, constant named by its statement or else by its proof): resolved to
    one of the corpus's full `names` (generated ones included) through the namespace and `open`s in
    force where possible, else as written. A (declaration, target) pair appears once, as
    `statement` when the signature names it."""
    res = _Resolver(table, names)
    full_names = table["full_name"].to_pylist()
    cols: dict[str, list] = {"full_name": [], "target": [], "resolved": [], "role": []}
    seen: set[tuple[str, str]] = set()
    for column, role in (("_deps", ROLE_STATEMENT), ("_proof_deps", ROLE_PROOF)):
        deps_list = table[column]
        parents = pc.list_parent_indices(deps_list).to_numpy()
        flat_arr = pc.list_flatten(deps_list)
        proof = role == ROLE_PROOF
        for target, p, ok in zip(flat_arr.to_pylist(), parents, res.maybe(flat_arr)):
            full = res(target, p) if ok else None
            if full is None and proof and "." in target:
                full = res.prefix(target, p)
            key = (full_names[p], full or target)
            if key in seen:
                continue
            seen.add(key)
            cols["full_name"].append(key[0])
            cols["target"].append(key[1])
            cols["resolved"].append(full is not None)
            cols["role"].append(role)
    n = len(cols["target"])
    return pa.table({"corpus": pa.array([corpus] * n, pa.string()), **cols}).cast(DEPENDENCIES)
