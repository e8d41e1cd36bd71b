"""One TLS context for every HTTP client a Synapse process opens.

httpx builds a new context for each client, loading the whole CA bundle: about 100 ms of CPU
per webhook delivery, per `SynapseClient`, per readiness probe. They all pass `verify=tls_context()`
instead, built once with httpx's own defaults (certifi's bundle, or `SSL_CERT_FILE` /
`SSL_CERT_DIR`). A context is safe to share between connections, clients and threads.
"""

from __future__ import annotations

import ssl
from functools import cache

import httpx


@cache
def tls_context() -> ssl.SSLContext:
    """The process's shared client TLS context (built on first use)."""
    return httpx.create_ssl_context()
