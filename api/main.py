"""Builds the FastAPI app: `create_app()` (uvicorn factory) with one Temporal client.

Serve with `synapse api` or `uvicorn api.main:create_app --factory`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import Depends, FastAPI
from fastapi.exceptions import RequestValidationError
from fastapi.middleware.cors import CORSMiddleware
from starlette.exceptions import HTTPException as StarletteHTTPException
from temporalio.client import Client
from temporalio.service import RPCError

from core.agent_registry import UnknownAssignee, load_registry
from core.artifacts import ArtifactStorageUnavailable, ArtifactStore
from core.artifacts.owners import ArtifactOwners
from core.experience import index_for
from core.logs import redact_uvicorn_logs
from core.rules.store import RuleStore
from core.security import parse_api_keys
from core.settings import Settings
from core.tracing import Tracing
from core.version import synapse_version

from . import console, docs, headers, openapi
from .agui import routes as agui
from .calls.errors import CallError
from .calls.sizes import TooLarge
from .errors import (
    call_error_handler,
    method_not_allowed_handler,
    storage_error_handler,
    temporal_error_handler,
    too_large_handler,
    unknown_assignee_handler,
    validation_error_handler,
)
from .limits import ARTIFACT_UPLOAD_PATH, MESSAGE_HINT, BodyLimit
from .metrics import ApiMetrics, RequestMetrics
from .nesting import nesting_checked
from .rate_limits import RateLimits, TokenBuckets
from .routes import (
    access,
    artifacts,
    events,
    experience,
    grants,
    graphs,
    health,
    interactions,
    rules,
    sessions,
    tools,
)
from .routes import codec as codec_routes
from .scope import in_scope
from .sse import StreamHub
from .tracing import RequestSpans

log = logging.getLogger(__name__)

DESCRIPTION = """Durable, human-supervised AI agents on Temporal.

Send a message to a session, watch its events, approve or deny the tool calls it proposes.
Every session is a Temporal workflow (`session:<key>`) you can inspect in the Web UI."""


def create_app(
    settings: Settings | None = None, client: Client | None = None, tracing: Tracing | None = None
) -> FastAPI:
    """The API. Connects to Temporal in the lifespan unless a client is given (tests, whose client
    carries `tracing`'s interceptor if they trace); traces when the OTLP variables say so."""
    settings = settings or Settings()
    redact_uvicorn_logs()  # also when served by a bare `uvicorn --factory`
    if tracing is None and client is None:
        tracing = Tracing.from_env("synapse-api")
    api_keys = parse_api_keys(settings.api.keys) if settings.api.keys else None
    if api_keys is not None and api_keys.in_clear:
        log.warning(
            "SYNAPSE_API_KEYS holds %d key(s) in clear; store their digests instead "
            "(`sha256:<hex>:principal:role`; `synapse keys new PRINCIPAL ROLE` makes one)",
            api_keys.in_clear,
        )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if client is not None:
            app.state.client = client
        else:
            from core.connect import connect_client

            app.state.client = await connect_client(settings, tracing=tracing)
        app.state.hub = StreamHub(
            app.state.client,
            client_buffer=settings.api.sse_client_buffer,
            keepalive_seconds=settings.api.sse_keepalive_seconds,
            store=app.state.artifacts,
        )
        try:
            yield
        finally:
            await app.state.hub.close()
            if tracing is not None and client is None:
                tracing.shutdown()

    app = FastAPI(
        title="Synapse",
        version=synapse_version(),
        description=DESCRIPTION,
        lifespan=lifespan,
        dependencies=[Depends(nesting_checked)],  # every route: no JSON body past SYNAPSE_MAX_JSON_DEPTH
        docs_url=None,  # `docs.install` serves both pages with local assets
        redoc_url=None,
    )
    app.state.settings = settings
    app.state.metrics = ApiMetrics()
    app.state.api_keys = api_keys
    app.state.registry = load_registry(settings)
    app.state.artifacts = ArtifactStore.from_settings(settings)
    app.state.artifact_owners = ArtifactOwners.beside(app.state.artifacts)
    app.state.experience = index_for(settings)
    app.state.rules = RuleStore.from_settings(settings)
    app.add_exception_handler(RequestValidationError, validation_error_handler)
    app.add_exception_handler(RPCError, temporal_error_handler)
    app.add_exception_handler(CallError, call_error_handler)
    app.add_exception_handler(UnknownAssignee, unknown_assignee_handler)
    app.add_exception_handler(TooLarge, too_large_handler)
    app.add_exception_handler(ArtifactStorageUnavailable, storage_error_handler)
    app.add_exception_handler(StarletteHTTPException, method_not_allowed_handler)
    limits = settings.limits

    def body_limit(method: str, path: str) -> tuple[int, str, str]:
        if method == "POST" and path == ARTIFACT_UPLOAD_PATH:
            return limits.max_artifact_bytes, "SYNAPSE_MAX_ARTIFACT_BYTES", ""
        hint = MESSAGE_HINT if path.endswith("/messages") else ""
        return limits.max_request_bytes, "SYNAPSE_MAX_REQUEST_BYTES", hint

    app.add_middleware(BodyLimit, limit_for=body_limit)
    if settings.api.rate_limit is not None:  # before anything is read; metrics still count the 429s
        app.add_middleware(RateLimits, buckets=TokenBuckets(settings.api.rate_limit, settings.api.rate_burst))
    app.add_middleware(RequestMetrics, metrics=app.state.metrics)
    if tracing is not None:
        app.add_middleware(RequestSpans, tracer=tracing.tracer)
    codec = settings.temporal.codec()
    if codec is not None:  # the Web UI reads encrypted payloads through the codec server
        app.state.codec = codec
        app.include_router(codec_routes.router)
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.temporal.ui_origins,
            allow_methods=["POST"],
            allow_headers=["Content-Type", "X-Namespace", "Authorization"],
            allow_credentials=True,
        )
    for module in (
        health,
        access,
        sessions,
        interactions,
        grants,
        rules,
        tools,
        events,
        graphs,
        artifacts,
        experience,
        agui,
    ):
        app.include_router(module.router, dependencies=[Depends(in_scope)])
    if settings.lark.enabled:  # imported only then: importing lark-oapi takes seconds
        from .lark import routes as lark

        lark.install(app, settings)
    if settings.dingtalk.enabled:  # imported only then, as Lark's
        from .dingtalk import routes as dingtalk

        dingtalk.install(app, settings)
    openapi.install(app, keys_on=api_keys is not None, rate_limited=settings.api.rate_limit is not None)
    docs.install(app)
    console.install(app)
    headers.install(app, public_url=settings.api.public_url)
    return app
