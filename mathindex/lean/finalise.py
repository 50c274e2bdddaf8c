"""The corpus-wide pass over raw per-file rows: names of generated declarations (anonymous
instances, `@[to_additive]`/`@[to_dual]` twins, `attribute [...]` targets), decl ids and the
dependency edges table (`dependencies.py`)."""

from __future__ import annotations

import hashlib
import json
import logging

import pyarrow as pa
import pyarrow.compute as pc

from mathindex.lean import names as guess
from mathindex.lean.dependencies import dependency_table
from mathindex.lean.twins import twin_name, twin_statement
from mathindex.lean.instances import Lookup, instance_name, resolve
from mathindex.lean.scanner import STAGE
from mathindex.schemas.common import ERRORS, error_row
from mathindex.schemas.lean import DECLARATIONS

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


_STATEMENT_TEXT = ("signature", "type", "variables")


def _state_twins(raw: pa.Table, rows: list[int], source: dict[int, str], full: list[str],
                 explicit: dict[str, dict[str, str]]) -> pa.Table:
    """`raw` with the statement of each `@[to_dual]` / `@[to_additive]` twin in `rows` written as the
    twin states it (`twins.twin_statement`): its signature, type and variables, and as its
    statement's constants (`_deps`) its source's (`source`: row -> source name), translated the same
    way. A twin the token rule cannot state keeps its source's text and takes its source's
    constants as they are. `explicit`: per origin, source name -> twin name."""
    if not rows:
        return raw
    cols = {c: raw[c].to_pylist() for c in (*_STATEMENT_TEXT, "_deps", "origin")}
    row_of: dict[str, int] = {}
    for i, n in enumerate(full):
        if n and n not in row_of:
            row_of[n] = i
    done: dict[str, list[int]] = {}
    for i in rows:
        kind, src = cols["origin"][i], row_of.get(source[i])
        deps = cols["_deps"][src] if src is not None else []
        new = {c: twin_statement(kind, cols[c][i], explicit[kind]) for c in _STATEMENT_TEXT if cols[c][i]}
        stated = not any(v is None for v in new.values())
        done.setdefault(kind, [0, 0])[0 if stated else 1] += 1
        if not stated:
            cols["_deps"][i] = deps
            continue
        new["_deps"] = [twin_name(kind, d, explicit[kind]) for d in deps or []]
        for c, v in new.items():
            cols[c][i] = v
    for kind, (stated, kept) in sorted(done.items()):
        log.info("%s twins: %d stated as the twin, %d keep their source's text", kind, stated, kept)
    for c in (*_STATEMENT_TEXT, "_deps"):
        field = raw.schema.field(c)
        raw = raw.set_column(raw.schema.get_field_index(c), field, pa.array(cols[c], field.type))
    return raw


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

    stated = [i for i in twin_rows if full[i] and origins[i] in translations]
    raw = _state_twins(raw, stated, {i: src_of[i] for i in stated}, full, translations)
    named = pa.array([bool(n) for n in full], pa.bool_())
    full_arr = pa.array(full, pa.string())
    ids = [
        hashlib.sha256(f"{corpus}\0{m}\0{n}\0{ln}".encode()).hexdigest()[:16]
        for m, n, ln in zip(modules, full, lines)
    ]
    table = raw.set_column(raw.schema.get_field_index("full_name"), "full_name", full_arr)
    table = table.append_column("decl_id", pa.array(ids, pa.string()))
    table = table.filter(named)
    decls = table.select(DECLARATIONS.names).cast(DECLARATIONS)

    deps = dependency_table(table, corpus, {n for n in full if n})
    return decls, deps, pa.Table.from_pylist(errors, schema=ERRORS)
