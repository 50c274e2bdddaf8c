"""The catalogue of maintained benchmarks (bench/benchmarks.yaml) as typed records: reading it,
filling a command's placeholders, and the table bench/README.md shows.

    .venv/bin/python -m bench.common.catalogue    # prints the table for bench/README.md
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, model_validator

CATALOGUE = Path(__file__).resolve().parents[1] / "benchmarks.yaml"
PLACEHOLDER = re.compile(r"\{(\w+)\}")


class Benchmark(BaseModel):
    """One maintained benchmark or tool: `python -m bench.<name>`; `sample` is a command that needs
    nothing beyond the bundled sample (the tests run it)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    kind: Literal["benchmark", "tool"]
    command: str
    needs: list[str]
    prints: str
    figures: list[str]
    when: str
    sample: str | None = None

    @property
    def module(self) -> str:
        return f"bench.{self.name}"


class Catalogue(BaseModel):
    """The file: placeholders and the `needs` vocabulary are declared before they are used."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1]
    placeholders: dict[str, str]
    needs: dict[str, str]
    benchmarks: list[Benchmark]

    @model_validator(mode="after")
    def _declared(self) -> "Catalogue":
        names = [b.name for b in self.benchmarks]
        if len(set(names)) != len(names):
            raise ValueError(f"names listed twice: {sorted({n for n in names if names.count(n) > 1})}")
        for b in self.benchmarks:
            if not b.figures:
                raise ValueError(f"{b.name}: no figure")
            if unknown := set(b.needs) - set(self.needs):
                raise ValueError(f"{b.name}: needs {sorted(unknown)} are not in the vocabulary")
            if b.needs == ["sample"] and b.sample is None:
                raise ValueError(f"{b.name}: needs only the sample but has no sample command")
            for command in filter(None, (b.command, b.sample)):
                if not command.startswith(f"python -m {b.module}"):
                    raise ValueError(f"{b.name}: {command!r} does not run python -m {b.module}")
                if unknown := set(PLACEHOLDER.findall(command)) - set(self.placeholders):
                    raise ValueError(f"{b.name}: placeholders {sorted(unknown)} are not declared")
        return self


def load_catalogue(path: Path = CATALOGUE) -> Catalogue:
    return Catalogue.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def fill(command: str, values: dict[str, str], python: str = sys.executable) -> list[str]:
    """The command's argv with its placeholders replaced by `values` and `python` by this interpreter
    (or `python`); a placeholder without a value is a KeyError."""
    argv = [PLACEHOLDER.sub(lambda m: values[m.group(1)], word) for word in shlex.split(command)]
    return [python, *argv[1:]] if argv[0] == "python" else argv


def table(catalogue: Catalogue) -> str:
    """The catalogue as a Markdown table: name, needs, the figures, when to run it."""
    rows = ["| benchmark | needs | figures | when |", "|---|---|---|---|"]
    for b in catalogue.benchmarks:
        tool = " (tool)" if b.kind == "tool" else ""
        figures = ", ".join(f"`{f}`" for f in b.figures)
        rows.append(f"| `{b.name}`{tool} | {', '.join(b.needs)} | {figures} | {b.when} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    print(table(load_catalogue()), end="")


if __name__ == "__main__":
    main()
