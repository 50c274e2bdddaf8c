"""Informalisation: Lean statements rendered into English.

- `rules`: the rule templates (name words, binder phrases, the glosses of used constants).
- `informalise`: the informalisers (rules, HTTP model), their cache by type hash, and the stage.
"""

from mathindex.informal.informalise import (
    HttpInformaliser,
    InformalInput,
    Informaliser,
    Rendering,
    RuleInformaliser,
    informalise,
)

__all__ = ["HttpInformaliser", "InformalInput", "Informaliser", "Rendering", "RuleInformaliser", "informalise"]
