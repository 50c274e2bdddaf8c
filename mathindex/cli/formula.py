"""`mathindex formula LATEX | --file FILE`: each formula's operator tree, path tokens and canonical form."""

from __future__ import annotations

import argparse
import json

from mathindex.cli.exits import EXIT_OK, UsageError
from mathindex.formula.api import describe_formula


def run(args: argparse.Namespace) -> int:
    if (args.latex is None) == (args.file is None):
        raise UsageError("mathindex formula: give one LATEX argument or --file FILE")
    lines = [args.latex] if args.latex is not None else args.file.read_text(encoding="utf-8", errors="replace").splitlines()
    for line in lines:
        if args.file is not None and not line.strip():
            continue
        d = describe_formula(line)
        if args.json:
            print(json.dumps({"input": line, **d}, ensure_ascii=False, sort_keys=True))
        else:
            print(f"formula:    {line}")
            print(f"parser:     {d['parser']}  status: {d['status']}")
            print(f"tree:       {d.get('tree_text')}")
            print(f"paths:      {' '.join(d['path_tokens'][:40])}{' …' if len(d['path_tokens']) > 40 else ''}")
            print(f"canonical:  {d.get('canonical')}  ({d.get('canonical_status')})")
            print()
    return EXIT_OK
