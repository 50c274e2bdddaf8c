"""The formal index's constant resolution does not depend on PYTHONHASHSEED."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (
    "from mathindex.formal.keys import ConstantResolver\n"
    "names = ['Finset.mulAntidiag', 'Multiset.mulAntidiag', 'List.mulAntidiag', 'Set.mulAntidiag', 'Fintype.mulAntidiag', 'Nat.mulAntidiag']\n"
    "r = ConstantResolver(names)\n"
    "print(sorted(r.constants('Thm.x', {'mulAntidiag'}, ['Set', 'Finset', 'Multiset', 'List', 'Fintype', 'Nat'])))\n"
)


def test_a_leaf_under_several_named_types_resolves_the_same_under_every_hash_seed():
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5", "6", "7"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
        out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        seen.add(out.stdout.strip())
    assert len(seen) == 1, seen
    assert "'Set.mulAntidiag'" in seen.pop()  # the first named type (the index passes them sorted)
