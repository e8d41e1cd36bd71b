"""Connecting to Temporal the standard way, for every Synapse entry point.

The address, namespace, API key and TLS come from `temporalio.envconfig`: a profile in the
Temporal config file (`TEMPORAL_CONFIG_FILE`, `TEMPORAL_PROFILE`) overridden by `TEMPORAL_ADDRESS`,
`TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY` and the `TEMPORAL_TLS*` variables. With none of them set,
the embedded dev server of `synapse up` (`127.0.0.1:<SYNAPSE_TEMPORAL_PORT>`) is used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from temporalio.client import Client
from temporalio.converter import DataConverter, DefaultFailureConverterWithEncodedAttributes
from temporalio.envconfig import ClientConfig, ClientConnectConfig
from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig
from temporalio.service import RPCError

from .artifacts import ArtifactStore, data_converter
from .settings import Settings
from .tracing import Tracing

HOW_TO_CHOOSE = (
    "set TEMPORAL_ADDRESS (and TEMPORAL_NAMESPACE, TEMPORAL_API_KEY) or a TEMPORAL_PROFILE, "
    "or start the embedded server with `synapse up`"
)


class ConnectError(Exception):
    """Temporal could not be reached or configured; the message is one line for the user."""


def connect_config(
    settings: Settings | None = None, env: Mapping[str, str] | None = None
) -> ClientConnectConfig:
    """Resolve the `Client.connect` arguments from the Temporal profile and environment.

    Args:
        settings: Synapse settings; their `temporal_port` gives the default address.
        env: Environment to read instead of `os.environ` (used by `synapse up` for its children).

    Returns:
        Keyword arguments for `Client.connect`, always with `target_host` and `namespace`.

    Raises:
        ConnectError: The Temporal config file or profile is invalid.
    """
    settings = settings or Settings()
    try:
        config = ClientConfig.load_client_connect_config(override_env_vars=env)
    except Exception as err:  # the bridge raises its own ConfigError type
        raise ConnectError(f"error: invalid Temporal client configuration: {err}") from err
    config.setdefault("target_host", f"127.0.0.1:{settings.temporal.port}")
    config.setdefault("namespace", "default")
    return config


def synapse_converter(settings: Settings) -> DataConverter:
    """The pydantic data converter with large payloads claim-checked into the artifact store and,
    with SYNAPSE_CODEC_KEYS, every payload and failure message encrypted (`core/codec.py`)."""
    store = ArtifactStore.from_settings(settings)
    converter = data_converter(store, threshold=settings.limits.claim_check_bytes)
    codec = settings.temporal.codec()
    if codec is None:
        return converter
    return dataclasses.replace(
        converter, payload_codec=codec, failure_converter_class=DefaultFailureConverterWithEncodedAttributes
    )


def metrics_runtime(settings: Settings) -> Runtime | None:
    """A runtime serving Prometheus metrics at SYNAPSE_WORKER_METRICS_ADDRESS (None when unset)."""
    address = settings.temporal.worker_metrics_address
    if not address:
        return None
    return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(bind_address=address)))


async def connect_client(
    settings: Settings | None = None,
    *,
    env: Mapping[str, str] | None = None,
    runtime: Runtime | None = None,
    tracing: Tracing | None = None,
) -> Client:
    """Connect a Temporal client with Synapse's data converter.

    Pydantic models as JSON, and every payload of `limits.claim_check_bytes` or more kept in
    the artifact store under `data_dir` (only a reference goes into history): the worker and
    every client of one deployment must share that store.

    Args:
        settings: Synapse settings (defaults read from `SYNAPSE_*`).
        env: Environment to resolve the connection from instead of `os.environ`.
        runtime: The SDK runtime (a worker's, with its metrics); the default one when None.
        tracing: OpenTelemetry tracing (`core/tracing.py`): its interceptor traces the client's
            calls and every worker built on the client.

    Returns:
        A connected client.

    Raises:
        ConnectError: The server could not be reached; the message names the address and how
            to choose another.
    """
    settings = settings or Settings()
    config = connect_config(settings, env)
    try:
        return await Client.connect(
            **config,
            data_converter=synapse_converter(settings),
            runtime=runtime,
            interceptors=tracing.interceptors() if tracing else [],
        )
    except (RuntimeError, RPCError) as err:  # the SDK raises RuntimeError on a failed connect
        address, namespace = config["target_host"], config["namespace"]
        raise ConnectError(
            f"error: cannot reach Temporal at {address} (namespace {namespace!r}); {HOW_TO_CHOOSE}"
        ) from err
