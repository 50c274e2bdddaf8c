"""The HTTP API and the web page over a served release (FastAPI; `mathindex serve ROOT`).

Queries run on a bounded thread pool (THREADS_PER_CORE threads a core: torch, FAISS and BM25 each
use one thread per query; the others wait in order), each under a time budget: past it the answer
is a 503, and a query still waiting for a thread is dropped. Bad input is a 4xx with a one-line JSON body, never a 500."""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Literal

import uvicorn
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from mathindex.serve.pages import HEADERS, SecurityHeaders, declaration_page, source_page, with_title_parts
from mathindex.serve.responses import (
    DeclarationResponse,
    ErrorBody,
    FormalSearchResponse,
    FormulaResponse,
    HealthResponse,
    PremisesResponse,
    ReleaseResponse,
    ResolveResponse,
    SearchResponse,
)
from mathindex.limits import MAX_K, BadInput, checked_place, checked_text, checked_url_part
from mathindex.serve.release import PREMISES_K, describe
from mathindex.serve.swap import ReleaseHolder

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
BUDGET_S = 5.0
# One query thread a core: the rest wait their turn in order, so a query's latency is its wait plus its
# own time. Four a core share the cores among eight queries at once (and meet at the packed encoder
# more often, serve/encoder.py): on whole Mathlib, 20 clients, p95 616 against 425 ms and 48.7 against
# 58.1 q/s (medians of 3 alternating bench/serve_load.py runs, docs/results/serving.md).
THREADS_PER_CORE = 1
MAX_SOURCE_BYTES = 4 << 20
_ERRORS = {status: {"model": ErrorBody} for status in (400, 404, 413, 422, 503)}


class BudgetExceeded(Exception):
    pass


class QueryRunner:
    """A bounded pool of query threads; `run` answers within `budget_s` or raises BudgetExceeded."""

    def __init__(self, threads: int, budget_s: float):
        self.budget_s = budget_s
        self.pool = ThreadPoolExecutor(max_workers=max(1, threads), thread_name_prefix="query")

    async def run(self, fn, *args):
        future = self.pool.submit(fn, *args)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.budget_s)
        except TimeoutError:
            future.cancel()  # still queued: never runs; already running: finishes, answer dropped
            raise BudgetExceeded(f"the query took longer than the {self.budget_s:g} s budget") from None

    def close(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)


class Utf8Only:
    """ASGI middleware: a request whose path or query string percent-decodes to bytes that are not
    UTF-8 is a 400 (`limits.checked_url_part`); the framework would read `%FF` as U+FFFD and answer."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            try:
                checked_url_part(scope.get("raw_path") or b"", "path")
                checked_url_part(scope.get("query_string") or b"", "query string")
            except BadInput as exc:
                await _error(exc.status, str(exc))(scope, receive, send)
                return
        await self.app(scope, receive, send)


def configure_runtime() -> None:
    """One thread per query inside torch and FAISS: the pool gives the parallelism, and intra-op
    threads on 2 cores only add synchronisation (see embed/channel.py `encode_one`)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # torch, if a part imports it later, starts with one
    torch = sys.modules.get("torch")  # not imported here: a server whose queries need no torch never loads it
    if torch is not None:
        torch.set_num_threads(1)
    try:
        import faiss  # here, not at the top: its OpenMP runtime reads OMP_NUM_THREADS when loaded (set above)

        faiss.omp_set_num_threads(1)
    except ImportError:  # pragma: no cover - faiss is a dependency
        pass


def _json(model) -> Response:
    """A response model as JSON, serialised once by pydantic (FastAPI would validate it again
    against `response_model` and encode it twice; the schema in /openapi.json is the same)."""
    return Response(model.model_dump_json(), media_type="application/json")


def _error(status: int, message: str) -> JSONResponse:
    # the headers here too: a 500 is answered outside the middleware (Starlette's ServerErrorMiddleware)
    return JSONResponse(status_code=status, content={"error": message, "status": status}, headers=HEADERS)


def create_app(holder: ReleaseHolder, *, threads: int | None = None, budget_s: float = BUDGET_S) -> FastAPI:
    """The API over `holder`'s current release (read once per request)."""
    runner = QueryRunner(threads or THREADS_PER_CORE * (os.cpu_count() or 1), budget_s)

    @asynccontextmanager
    async def lifespan(_: FastAPI):
        yield
        runner.close()

    app = FastAPI(lifespan=lifespan, title="mathindex", version="1", summary="Search a mathindex release: Lean declarations and LaTeX statements",
                  docs_url=None, redoc_url=None)  # Swagger UI would fetch its scripts from a CDN
    app.state.holder, app.state.runner = holder, runner
    app.add_middleware(Utf8Only)
    app.add_middleware(SecurityHeaders)  # added last: outermost, so every answer (a refusal too) carries the headers

    @app.exception_handler(BadInput)
    async def _bad_input(_: Request, exc: BadInput):
        return _error(exc.status, str(exc))

    @app.exception_handler(BudgetExceeded)
    async def _budget(_: Request, exc: BudgetExceeded):
        return _error(503, str(exc))

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError):
        parts = []
        for e in exc.errors():
            where = ".".join(str(x) for x in e.get("loc", ()) if x not in ("query", "path"))
            parts.append(f"{where}: {e.get('msg')}" if where else str(e.get("msg")))
        return _error(400, "; ".join(parts) or "invalid request")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException):
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _bug(_: Request, exc: Exception):
        log.exception("internal error")
        return _error(500, f"internal error: {type(exc).__name__}")

    @app.get("/search", response_model=SearchResponse | FormalSearchResponse, responses=_ERRORS, tags=["search"])
    async def search(q: str = Query(..., description="words, LaTeX ($…$), a Lean term (`…`) or a name; with "
                                                     "mode=formal, Loogle syntax"),
                     k: int = Query(10, ge=1, le=MAX_K, description="hits to return"),
                     mode: Literal["fused", "formal"] = Query("fused", description="fused: every channel, with "
                                                              "`match`; formal: Loogle-style, the formal index alone")):
        """Fused hits with their kind, title (a LaTeX statement's also as prose and sanitised MathML
        parts), file:line, channel ranks and score, and how well they match (`match`, `notice`); with
        mode=formal, the declarations matching every Loogle term (422 for a query that does not parse
        or names an unknown constant)."""
        release, q = holder.current, checked_text(q, "q")
        if mode == "formal":
            return _json(await runner.run(release.formal, q, k))
        return _json(await runner.run(lambda: with_title_parts(release.search(q, k), release.is_statement)))

    @app.get("/resolve", response_model=ResolveResponse, responses=_ERRORS, tags=["search"])
    async def resolve(id: str = Query(..., description="a full or dotted-suffix name, a Stacks tag, a label, or an "
                                                       "external identifier: Q11518, A000010, arXiv:2106.01234, "
                                                       "a DOI or its URL, MR0344216, Zbl 0273.12001")):
        """The identifier resolver alone: exact names, aliases, external identifiers, dotted suffixes and
        nicknames; a `notice` when the query looks like an identifier the release lacks."""
        release = holder.current
        return _json(await runner.run(release.resolve, checked_text(id, "id")))

    @app.get("/formula", response_model=FormulaResponse, responses=_ERRORS, tags=["formula"])
    async def formula(latex: str = Query(..., description="one formula, LaTeX or a Lean term")):
        """The operator tree, path tokens, canonical form and parse status; 422 when unreadable."""
        return _json(await runner.run(describe, checked_text(latex, "latex")))

    @app.get("/declaration/{name:path}", response_model=DeclarationResponse, responses=_ERRORS, tags=["search"])
    async def declaration(name: str):
        """The node's row, its dependencies, what cites it and where it is defined."""
        release = holder.current
        found = await runner.run(release.declaration, checked_text(name, "name"))
        if found is None:
            raise BadInput(f"no declaration or statement named {name!r} in release {release.release_id}", 404)
        return _json(found)

    @app.get("/decl/{name:path}", response_class=HTMLResponse, responses=_ERRORS, tags=["page"])
    async def declaration_html(name: str):
        """The declaration as a page: statement, informal rendering, what it uses and what uses it,
        and a link to its source line."""
        release, name = holder.current, checked_text(name, "name")
        page = await runner.run(lambda: (found := release.declaration(name)) and declaration_page(found))
        if page is None:
            raise BadInput(f"no declaration or statement named {name!r} in release {release.release_id}", 404)
        return HTMLResponse(page)

    @app.get("/premises", response_model=PremisesResponse, responses=_ERRORS, tags=["premises"])
    async def premises(goal: str = Query(..., description="the goal, a Lean term (`a * b ≤ c`)"),
                       context: str = Query("", description="hypotheses as Lean binders (`{a b : ℕ} (h : a ≤ b)`)"),
                       k: int = Query(PREMISES_K, ge=1, le=MAX_K, description="premises to return"),
                       file: str | None = Query(None, description="the goal's file or module (`Mathlib/Order/Basic.lean`)"),
                       line: int | None = Query(None, ge=1, description="the goal's line in `file`")):
        """Declarations a proof of the goal is likely to name, with score and signals; in `file`
        above `line`, only what that file imports and declares there. 422 when the goal does not
        parse or the file is not the release's, 404 when the release has no premise index."""
        release = holder.current
        return _json(await runner.run(release.premises, checked_text(goal, "goal"),
                                      checked_text(context, "context", empty_ok=True), k,
                                      *checked_place(file, line)))

    @app.get("/health", response_model=HealthResponse, tags=["release"])
    async def health():
        current = holder.current
        vector = current.engine.vector
        packer = getattr(vector.embedder, "packer", None) if vector is not None else None
        return _json(HealthResponse(status="ok", release_id=current.release_id, watching=holder.watching,
                                    swaps=holder.swaps, refused=holder.refused,
                                    uptime_s=round(time.time() - holder.started, 1),
                                    query_packs=dict(packer.stats) if packer is not None else None))

    @app.get("/release", response_model=ReleaseResponse, tags=["release"])
    async def release():
        """The manifest summary, the gate verdict and the benchmark metrics of the served release."""
        return _json(holder.current.summary())

    @app.get("/source/{corpus}/{file:path}", response_class=HTMLResponse, responses=_ERRORS, tags=["page"])
    async def source(corpus: str, file: str):
        """A corpus file with numbered lines (`#L<n>` anchors), when the corpus is on this machine."""
        path = holder.current.source_file(corpus, file)
        if path is None:
            raise BadInput(f"no source file {file!r} in corpus {corpus!r} on this server", 404)
        if path.stat().st_size > MAX_SOURCE_BYTES:
            raise BadInput(f"{file} is larger than {MAX_SOURCE_BYTES} bytes", 413)
        return HTMLResponse(source_page(corpus, file, path.read_text(encoding="utf-8", errors="replace")))

    @app.get("/", include_in_schema=False)
    async def page():
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def http_stack() -> dict[str, str]:
    """uvicorn's HTTP parser and event loop: httptools and uvloop (C: they hold the GIL the query
    threads need for less time; a cached answer cost the server 0.28-0.45 ms of CPU against
    0.56-0.66 ms with h11 and asyncio, bench/experiments/serve_http.py on whole Mathlib), else h11 and asyncio,
    with a warning."""
    stack = {"http": "httptools" if importlib.util.find_spec("httptools") else "h11",
             "loop": "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"}
    if stack != {"http": "httptools", "loop": "uvloop"}:
        log.warning("serving with %s and %s: httptools and uvloop are not installed", stack["http"], stack["loop"])
    return stack


def serve(holder: ReleaseHolder, host: str, port: int, *, threads: int | None = None, budget_s: float = BUDGET_S,
          access_log: bool = False) -> None:
    """Runs the API until interrupted (uvicorn, one process: the release is loaded once)."""
    app = create_app(holder, threads=threads, budget_s=budget_s)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=access_log, timeout_graceful_shutdown=5,
                **http_stack())
