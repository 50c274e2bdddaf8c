"""Deployment steps that `prefect deploy` runs from prefect.yaml (its `build` section), on the
machine that deploys, before anything is registered."""

from __future__ import annotations

from pathlib import PurePosixPath

from mathindex.store.layout import OutputRootError, check_root_value


def check_release_root(out: str | None = None) -> dict[str, str]:
    """Refuses a deployment whose release root (`out`, from `{{ $MATHINDEX_OUT }}`) is unset, empty
    or not absolute (a relative root would land under the worker's working directory), so that
    `prefect deploy` fails in one line instead of a nightly run later. Prefect drops the argument
    when the variable is unset, hence the default. The file system is checked at the start of each
    run (`store.check_output_root`): the worker's machine may not be this one."""
    text = check_root_value(out)
    if not PurePosixPath(text).is_absolute():
        raise OutputRootError(f"the release root {text!r} of a deployment must be an absolute path "
                              "(set MATHINDEX_OUT=/path/to/root before `prefect deploy`)")
    return {"release_root": text}
