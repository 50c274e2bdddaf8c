"""Informalisation: Lean statements rendered into English.

- `rules`: the rule templates (name words, binder phrases, the glosses of used constants).
- `informalise`: the informaliser interface and the rules backend, their cache by type hash, and the stage.
- `http`: the HTTP model backend (imported from there: it loads `requests`, which the query side never needs).
"""

from mathindex.informal.informalise import (
    InformalInput,
    Informaliser,
    Rendering,
    RuleInformaliser,
    informalise,
    informalise_reported,
)

__all__ = ["InformalInput", "Informaliser", "Rendering", "RuleInformaliser", "informalise",
           "informalise_reported"]
