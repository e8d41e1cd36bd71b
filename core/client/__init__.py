"""The HTTP API from Python: `SynapseClient` (`sdk.py`), its errors, and following a session's
events over SSE (`sse.py` parses, `follow.py` resumes without loss)."""

from .errors import SynapseError
from .sdk import SynapseClient

__all__ = ["SynapseClient", "SynapseError"]
