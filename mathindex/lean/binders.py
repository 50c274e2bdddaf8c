"""Lean 4 binder syntax shared by the scanner and the proof-reference pass."""

from __future__ import annotations

import re

# a quantifier, big operator or `fun` and the names it binds, up to `,`, `:`, `=>`, `↦` or a relation
BINDER_INTRO = re.compile(r"(?:∀|∃!?|fun|λ|⨆|⨅|∑|∏|⋃|⋂|∫⁻?|Π|Σ|∃ᶠ|∀ᶠ)\s+([^,:=↦]*?)\s*(?:,|:|=>|↦|∈|∉|<|≤|>|≥|⊆|≠)")
