"""Mathlib's name-guessing rule for `@[to_additive]` and `@[to_dual]` twins.

A re-implementation of the rule (split a name component into words at `_` and at lower→upper
case changes, translate word by word, then fix known abbreviations), with short word tables.
"""

from __future__ import annotations

from functools import lru_cache


def _table(spec: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for item in spec.split():
        src, tgt = item.split("=")
        out[src] = tgt.split("+")
    return out


ADDITIVE_WORDS = _table(
    "one=Zero mul=Add smul=VAdd inv=Neg div=Sub sdiv=VSub prod=Sum hmul=HAdd hsmul=HVAdd "
    "hdiv=HSub hpow=HSMul finprod=Finsum tprod=TSum pow=NSMul npow=NSMul zpow=ZSMul mabs=Abs "
    "monoid=Add+Monoid submonoid=Add+Submonoid group=Add+Group subgroup=Add+Subgroup "
    "semigroup=Add+Semigroup torsor=Add+Torsor magma=Add+Magma haar=Add+Haar prehaar=Add+Prehaar "
    "unit=Add+Unit units=Add+Units cyclic=Add+Cyclic semigrp=Add+Semigrp grp=Add+Grp "
    "commute=Add+Commute semiconj=Add+Semiconj conjugates=Add+Conjugates conj=Add+Conj "
    "commutator=Add+Commutator rootable=Divisible zpowers=ZMultiples powers=Multiples "
    "multipliable=Summable gpfree=APFree quantale=Add+Quantale square=Even mconv=Conv "
    "irreducible=Add+Irreducible mlconvolution=LConvolution"
)
ADDITIVE_ABBREVIATIONS = dict(
    x.split("=")
    for x in (
        "isCancelAdd=IsCancelAdd isLeftCancelAdd=IsLeftCancelAdd isRightCancelAdd=IsRightCancelAdd "
        "cancelAdd=AddCancel leftCancelAdd=AddLeftCancel rightCancelAdd=AddRightCancel "
        "cancelCommAdd=AddCancelComm commAdd=AddComm zero_le=Nonneg zeroLE=Nonneg zero_lt=Pos "
        "zeroLT=Pos lezero=Nonpos le_zero=Nonpos ltzero=Neg lt_zero=Neg "
        "addAntidiagonal=Antidiagonal addSingle=Single addSupport=Support addTSupport=TSupport "
        "addPointed=Pointed addSpanning=Spanning addIndicator=Indicator isEven=Even "
        "isRegular=IsAddRegular isLeftRegular=IsAddLeftRegular isRightRegular=IsAddRightRegular "
        "hasFundamentalDomain=HasAddFundamentalDomain quotientMeasure=AddQuotientMeasure "
        "negFun=InvFun uniqueProds=UniqueSums orderOf=AddOrderOf zeroLePart=PosPart "
        "leZeroPart=NegPart isScalarTower=VAddAssocClass isOfFinOrder=IsOfFinAddOrder "
        "isCentralScalar=IsCentralVAdd function_addSemiconj=Function_semiconj "
        "function_addCommute=Function_commute divisionAddMonoid=SubtractionMonoid "
        "subNegZeroAddMonoid=SubNegZeroMonoid modularCharacter=AddModularCharacter "
        "addShift=Shift addSubshift=Subshift isQuotientCoveringMap=IsAddQuotientCoveringMap "
        "addExact=Exact isMonHom=IsAddMonHom mapMon=MapAddMon monObj=AddMonObj "
        "isModHom=IsAddModHom mapMod=MapAddMod modObj=AddModObj yonedaMon=YonedaAddMon "
        "conGen=AddConGen unoneD=unzeroD unone=unzero"
    ).split()
)

_DUAL_PAIRS = (
    "top/Bot inf/Sup inf₂/Sup₂ sinf/SSup min/Max untop/Unbot minimal/Maximal lower/Upper "
    "below/Above least/Greatest glb/LUB cofinal/Coinitial succ/Pred disjoint/Codisjoint "
    "atom/Coatom lfp/Gfp ioi/Iio ici/Iic ioc/Ico next/Prev heyting/Coheyting frame/Coframe "
    "epigraph/Hypograph terminal/Initial precompose/Postcompose cone/Cocone cones/Cocones "
    "fan/Cofan limit/Colimit lim/Colim limits/Colimits product/Coproduct products/Coproducts "
    "pushout/Pullback pushouts/Pullbacks span/Cospan kernel/Cokernel kernels/Cokernels "
    "unit/Counit monad/Comonad monadic/Comonadic section/Retraction"
)


def _dual_words() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"epi": ["Mono"]}
    for pair in _DUAL_PAIRS.split():
        a, b = pair.split("/")
        out[a] = [b]
        out[b[0].lower() + b[1:].lower() if b.isupper() else b.lower()] = [a[0].upper() + a[1:]]
    out["lub"], out["glb"] = ["GLB"], ["LUB"]
    return out


DUAL_WORDS = _dual_words()
DUAL_ABBREVIATIONS = dict(
    x.split("=")
    for x in (
        "wellFoundedLT=WellFoundedGT wellFoundedGT=WellFoundedLT nhdsLT=NhdsGT nhdsGT=NhdsLT "
        "nhdsLE=NhdsGE nhdsGE=NhdsLE relIsoLT=RelIsoGT relIsoGT=RelIsoLT succColimit=SuccLimit "
        "predColimit=PredLimit codirectedOrder=DirectedOrder directedOrder=CodirectedOrder "
        "galoisInsertion=GaloisCoinsertion galoisCoinsertion=GaloisInsertion "
        "leftOrdContinuous=RightOrdContinuous rightOrdContinuous=LeftOrdContinuous neTop=NeBot "
        "decidableSucc=DecidablePred ofSucc=OfPred"
    ).split()
)

_END_CAPITAL = {"LE": [""], "LT": [""], "GE": [""], "GT": [""], "WF": [""], "Coe": ["TC", "T", "HTCT"]}


def _upper(c: str) -> bool:
    return "A" <= c <= "Z"


def split_case(s: str) -> list[str]:
    """Split a name component at `_` (kept as its own part) and before capitals that follow a
    lower-case letter, treating LE, LT, GE, GT, WF and Coe… as words."""
    out: list[str] = []
    i0 = 0
    while True:
        i1 = i0 + 1
        if i1 >= len(s):
            out.append(s)
            return out
        if s[i0] == "_" or s[i1] == "_":
            out.append(s[:i1])
            s, i0 = s[i1:], 0
            continue
        if _upper(s[i1]):
            pref = s[:i1]
            if pref in _END_CAPITAL:
                found = next((x for x in _END_CAPITAL[pref] if s[i1:].startswith(x)), None)
                if found is not None:
                    out.append(pref + found)
                    s, i0 = s[i1 + len(found):], 0
                    if not s:
                        out.append(s)
                        return out
                    continue
            if not _upper(s[i0]):
                out.append(s[:i1])
                s, i0 = s[i1:], 0
                continue
        i0 = i1


def _decapitalize_seq(s: str) -> str:
    i = 0
    while i < len(s) and _upper(s[i]):
        i += 1
    return s[:i].lower() + s[i:]


def _decapitalize_like(r: str, s: str) -> str:
    return s if r and _upper(r[0]) else _decapitalize_seq(s)


def _apply_words(parts: list[str], words: dict[str, list[str]]) -> list[str]:
    out: list[str] = []
    for x in parts:
        y = words.get(x.lower())
        if y is None:
            out.append(x)
        else:
            out.extend([_decapitalize_like(x, y[0])] + y[1:])
    return out


def _fix_abbreviations(parts: list[str], abbrev: dict[str, str]) -> str:
    joined = "".join(parts).lower()
    if not any(k in joined for k in _lower_keys(id(abbrev), abbrev)):
        return "".join(parts)  # no abbreviation can match: the common case, answered fast
    out: list[str] = []
    pending = list(parts)
    acc: list[str] = []
    while pending or acc:
        if not pending:
            out.append(acc[0])
            pending, acc = acc[1:], []
            continue
        pre = pending.pop(0)
        s = acc + [pre]
        t = "".join(s)
        if pre == "_" and t and _upper(t[0]):
            out.append(s[0])
            pending, acc = s[1:] + pending, []
        elif _decapitalize_seq(t) in abbrev:
            out.append(_decapitalize_like(t, abbrev[_decapitalize_seq(t)]))
            acc = []
        else:
            acc = s
    return "".join(out)


_KEYS: dict[int, tuple[str, ...]] = {}


def _lower_keys(key: int, abbrev: dict[str, str]) -> tuple[str, ...]:
    if key not in _KEYS:
        _KEYS[key] = tuple(k.lower() for k in abbrev)
    return _KEYS[key]


def guess_name(component: str, words: dict[str, list[str]], abbrev: dict[str, str]) -> str:
    """Translate one name component (e.g. `mul_one` -> `add_zero`), keeping `'` separators."""
    return "'".join(
        _fix_abbreviations(_apply_words(split_case(tok), words), abbrev) if tok else tok
        for tok in component.split("'")
    )


@lru_cache(maxsize=1 << 17)
def additive_name(component: str) -> str:
    """`@[to_additive]`'s guess for one name component."""
    return guess_name(component, ADDITIVE_WORDS, ADDITIVE_ABBREVIATIONS)


@lru_cache(maxsize=1 << 17)
def dual_name(component: str) -> str:
    """`@[to_dual]`'s guess for one name component."""
    return guess_name(component, DUAL_WORDS, DUAL_ABBREVIATIONS)
