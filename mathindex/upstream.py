"""Laying out a pinned corpus from its upstream git repository: the files of the pinned commit that
the sources file's `upstream.files` patterns select, with the licence file, a `COMMIT` file (what
`sources.pin_source` verifies) and an `UPSTREAM` file, renamed into place whole. A source whose
`upstream.root` names a folder (Lean core's `src`) has that folder's files laid out at the top, so
module names start below it; a source pinned by its release `upstream.tag` gets the tag's commit.

The repository is given as a local clone or git directory (checked for the pinned commit; nothing
is fetched) or as a URL (only that commit is fetched, `--depth 1`, into `<target>.git` beside the
target, kept for the next run). Anything else is refused with a one-line `LayoutError`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mathindex.errors import SourceError
from mathindex.schemas.manifest import SourceSpec
from mathindex.sources import PACKAGE_ROOT, read_sources_file

URL = re.compile(r"^(https?|ssh|git|file)://|^[\w.-]+@[\w.-]+:")  # a URL, or scp-like user@host:path
GIT_TIMEOUT_S = 3600.0  # a depth-1 fetch of Mathlib is ~30 MB
ALLOWED_IN_REPO = "build"  # the one folder of the checkout a corpus may be laid out in (.gitignore'd)


class LayoutError(SourceError):
    """The corpus cannot be laid out as pinned: the repository given is not one, is not the
    upstream one, lacks the commit, cannot be fetched, or the target is not allowed."""


@dataclass(frozen=True)
class Layout:
    """What `layout` did: the target, its files (the licence file included), bytes, seconds, and
    whether the target already held the pinned commit (then nothing was written)."""

    out: Path
    files: int
    bytes: int
    seconds: float
    reused: bool = False
    commit: str = ""  # the commit laid out (the one the source's tag names, where it has no commit)


def pattern_regex(pattern: str) -> re.Pattern:
    """A file pattern as a regex over repository paths: `**` spans directories, `*` and `?` do not."""
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def upstream_specs(sources_file: Path, name: str | None = None) -> list[SourceSpec]:
    """The sources of a sources file, and the training corpora of its embedder recipe, that carry an
    upstream repository and a commit or a release tag (only `name`'s when given); LayoutError when
    there is none."""
    specs = [s for s in read_sources_file(sources_file).corpora() if s.upstream is not None and (s.commit or s.upstream.tag) and name in (None, s.name)]
    if not specs:
        which = f"no source named {name!r}" if name else "no source"
        raise LayoutError(f"{sources_file} has {which} with an upstream repository and a commit or tag to lay out")
    return specs


def upstream_url(spec: SourceSpec) -> str:
    """The public URL of a source's upstream repository (what `get-corpus` fetches when given none)."""
    return f"https://github.com/{spec.upstream.repository}"


def laid_out_name(spec: SourceSpec, path: str) -> str:
    """Where a selected repository file lies in the corpus: below `upstream.root` when the source
    names one (the licence file, anywhere, at the top under its own name), else where it is."""
    root = spec.upstream.root
    if root is None:
        return path
    if path == spec.upstream.license_file:
        return PurePosixPath(path).name
    if not path.startswith(root + "/"):
        raise LayoutError(f"{spec.upstream.repository}: {path} is selected but lies outside the corpus root {root}/")
    return path[len(root) + 1:]


def source_dir(sources_file: Path, spec: SourceSpec) -> Path:
    """Where the sources file says the corpus lies (its path, relative to the sources file)."""
    return (Path(sources_file).parent / spec.path).resolve()


def _git(git_dir: Path, *args: str, check: bool = True, timeout: float = 600.0) -> subprocess.CompletedProcess:
    """`git --git-dir GIT_DIR ARGS`, never prompting; LayoutError with git's last line when `check`."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true",
           "GIT_SSH_COMMAND": os.environ.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")}
    try:
        out = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, text=True, env=env,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LayoutError(f"git {args[0]} did not finish in {timeout:.0f} s") from None
    if check and out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["failed"])[-1]
        raise LayoutError(f"git {' '.join(args[:2])} failed in {git_dir}: {last}")
    return out


def _has(git_dir: Path, rev: str) -> bool:
    return _git(git_dir, "cat-file", "-e", rev, check=False).returncode == 0


def local_git_dir(path: Path) -> Path:
    """The git directory of a clone (its work tree or its `.git`) or of a bare repository at
    `path` itself (never one above it); LayoutError when there is none."""
    if not path.is_dir():
        raise LayoutError(f"{path}: no such directory")
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(path.resolve().parent)}
    out = subprocess.run(["git", "-C", str(path), "rev-parse", "--absolute-git-dir"], capture_output=True, text=True,
                         env=env)
    if out.returncode != 0:
        raise LayoutError(f"{path} is not a git checkout")
    return Path(out.stdout.strip())


def fetched_git_dir(url: str, spec: SourceSpec, git_dir: Path) -> Path:
    """`git_dir` (a bare repository, made when missing) holding the source's commit (else its
    release tag, as `refs/tags/TAG`) fetched from `url` alone (`--depth 1`); a repository that holds
    it already is not fetched again."""
    commit, tag = spec.commit, spec.upstream.tag
    made = not (git_dir / "HEAD").is_file()
    if made:
        git_dir.mkdir(parents=True, exist_ok=True)
        _git(git_dir, "init", "-q", "--bare")
    held = _has(git_dir, commit + "^{commit}") if commit else _has(git_dir, f"refs/tags/{tag}^{{commit}}")
    if not held:
        what, ref = (f"commit {commit}", commit) if commit else (f"tag {tag}", f"+refs/tags/{tag}:refs/tags/{tag}")
        out = _git(git_dir, "fetch", "-q", "--depth", "1", "--no-tags", url, ref, check=False, timeout=GIT_TIMEOUT_S)
        if out.returncode != 0:
            if made:
                shutil.rmtree(git_dir, ignore_errors=True)
            first = ([ln for ln in out.stderr.splitlines() if ln.strip()] or ["failed"])[0]
            raise LayoutError(f"could not fetch {what} from {url}: {first.removeprefix('fatal: ')}")
    return git_dir


def pinned_commit(git_dir: Path, spec: SourceSpec, given: str | None = None) -> str:
    """The commit to lay out: the source's `commit`, else the one its release tag names in the
    repository; LayoutError when the tag is missing there, or names another commit than `commit`."""
    tag, shown = spec.upstream.tag, given or str(git_dir)
    if tag is None:
        return spec.commit
    out = _git(git_dir, "rev-parse", "--verify", "-q", f"refs/tags/{tag}^{{commit}}", check=False)
    if out.returncode != 0:
        if spec.commit:  # the commit decides; the tag is checked where the repository has it
            return spec.commit
        raise LayoutError(f"{shown} has no tag {tag} of {spec.upstream.repository}: fetch it "
                          f"(git -C {shown} fetch {upstream_url(spec)} tag {tag}) or give the URL")
    found = out.stdout.strip()
    if spec.commit and found != spec.commit:
        raise LayoutError(f"tag {tag} of {shown} names commit {found}, not the pinned {spec.commit}")
    return found


def selected_files(git_dir: Path, spec: SourceSpec, commit: str, given: str | None = None) -> list[str]:
    """`commit`'s files matching the upstream patterns, sorted. LayoutError when the repository
    lacks the commit (naming what to do, or, when its HEAD has none of the selected files either,
    saying it is not the upstream repository), the licence file, or any file."""
    up, shown = spec.upstream, given or str(git_dir)
    regexes = [pattern_regex(p) for p in up.files]
    if not _has(git_dir, commit + "^{commit}"):
        head = _git(git_dir, "ls-tree", "-r", "--name-only", "HEAD", check=False).stdout.splitlines()
        if not any(r.match(n) for n in head for r in regexes):
            raise LayoutError(f"{shown} is not a checkout of {up.repository}: none of its files match {up.files}")
        raise LayoutError(f"{shown} does not have the pinned commit {commit} of {up.repository}: fetch it "
                          f"(git -C {shown} fetch https://github.com/{up.repository} {commit}) or give the URL")
    names = _git(git_dir, "ls-tree", "-r", "--name-only", commit).stdout.splitlines()
    files = sorted(n for n in names if any(r.match(n) for r in regexes))
    if not files:
        raise LayoutError(f"{shown} is not a checkout of {up.repository}: no file of commit {commit[:12]} matches {up.files}")
    if up.license_file not in names:
        raise LayoutError(f"licence file {up.license_file!r} is not in {up.repository} at {commit}")
    return files


def check_target(out: Path) -> None:
    """A corpus is laid out outside the repository, or under its `build/` folder (ignored by git),
    so that no corpus file is ever committed."""
    out = out.resolve()
    if out.is_relative_to(PACKAGE_ROOT) and not out.is_relative_to(PACKAGE_ROOT / ALLOWED_IN_REPO):
        raise LayoutError(f"{out} is inside the repository; corpora are laid out outside it or under "
                          f"{ALLOWED_IN_REPO}/")


def _safe_member(name: str) -> PurePosixPath | None:
    """A tar member's name as a relative path, None when it could leave the target."""
    p = PurePosixPath(name)
    return None if p.is_absolute() or any(part in ("", ".", "..") for part in p.parts) else p


def extract(git_dir: Path, commit: str, wanted: dict[str, str], staging: Path) -> int:
    """Writes the regular files `wanted` of `commit` (repository path -> path in the corpus) under
    `staging` (streamed from `git archive` of their top-level entries, each name checked); the bytes
    written."""
    tops = sorted({w.split("/", 1)[0] for w in wanted})
    proc = subprocess.Popen(["git", "--git-dir", str(git_dir), "archive", "--format=tar", commit, "--", *tops],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    written, total = set(), 0
    with tarfile.open(fileobj=proc.stdout, mode="r|") as tar:
        for member in tar:
            rel = _safe_member(member.name)
            if rel is None or not member.isfile() or rel.as_posix() not in wanted:
                continue
            dest = staging.joinpath(*PurePosixPath(wanted[rel.as_posix()]).parts)
            dest.parent.mkdir(parents=True, exist_ok=True)
            with tar.extractfile(member) as src, dest.open("wb") as fh:
                shutil.copyfileobj(src, fh)
            written.add(rel.as_posix())
            total += member.size
    err = proc.stderr.read().decode(errors="replace").strip()
    if proc.wait() != 0:
        raise LayoutError(f"git archive failed in {git_dir}: {(err.splitlines() or ['failed'])[-1]}")
    if missing := sorted(wanted.keys() - written):
        raise LayoutError(f"git archive of {commit[:12]} lacks {len(missing)} selected files, e.g. {missing[0]}")
    return total


def layout(source: str | Path, spec: SourceSpec, out: Path) -> Layout:
    """Lays out `spec`'s pinned files from `source` (a local clone or git directory, or a URL
    fetched into `<out>.git`) into `out`: staged beside it and renamed into place, the `COMMIT`
    file written last. The repository is checked first, always. A target that holds the commit and
    every selected file already is left as it is; one that holds another commit (or lacks a file)
    is replaced; anything else there is refused."""
    t0 = time.perf_counter()
    out = Path(out).resolve()
    check_target(out)
    src = str(source)
    if URL.match(src):
        git_dir = fetched_git_dir(src, spec, out.with_name(out.name + ".git"))
    else:
        git_dir = local_git_dir(Path(src))
    commit = pinned_commit(git_dir, spec, given=src)
    files = selected_files(git_dir, spec, commit, given=src)  # the repository given is checked even when `out` is laid out
    wanted = {f: laid_out_name(spec, f) for f in (*files, spec.upstream.license_file)}
    if len(set(wanted.values())) < len(wanted):
        raise LayoutError(f"{spec.upstream.repository}: two selected files would both be laid out as one name")
    commit_file = out / "COMMIT"
    held = commit_file.read_text().strip() if commit_file.is_file() else None
    if held == commit:
        have = [out / w for w in wanted.values()]
        if all(p.is_file() for p in have):
            return Layout(out, len(have), sum(p.stat().st_size for p in have), time.perf_counter() - t0, reused=True,
                          commit=commit)
    elif out.exists() and held is None:
        raise LayoutError(f"{out} exists and was not laid out from a pinned commit (no COMMIT file); remove it first")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        size = extract(git_dir, commit, wanted, staging)
        up = spec.upstream
        extra = "".join(f"{k}: {v}\n" for k, v in (("tag", up.tag), ("root", up.root)) if v)
        (staging / "UPSTREAM").write_text(f"repository: {up.repository}\ncommit: {commit}\n{extra}"
                                          f"license: {up.license}\nlicense_file: {laid_out_name(spec, up.license_file)}\n")
        (staging / "COMMIT").write_text(commit + "\n")
        if out.exists():  # another commit's layout: replaced whole
            old = out.with_name(f".{out.name}.old-{os.getpid()}")
            out.rename(old)
            shutil.rmtree(old)
        staging.rename(out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return Layout(out, len(wanted), size, time.perf_counter() - t0, commit=commit)
