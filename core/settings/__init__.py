"""The one settings object: read in entry points (worker, API, CLI) and passed down.

Grouped by concern, one module a group: `settings.temporal` (`temporal.py`), `settings.api`,
`settings.tools`, `settings.limits`, `settings.artifacts`, `settings.webhooks`, `settings.lark`,
`settings.dingtalk`, plus the data directory, the agents file and the stores' URLs (`root.py`).
Every field is read from its own environment variable (named in its `validation_alias`:
`SYNAPSE_API_PORT`, `LARK_APP_ID`, ...) or a `.env` file (`source.py`), so the variables stay flat
while the code reads `settings.api.port`.

Workflows never read settings; what changes their behaviour reaches them as input.
"""

from .api import ApiSettings
from .artifacts import ArtifactSettings
from .checks import ChannelConfigError
from .dingtalk import DingTalkSettings
from .lark import LarkSettings
from .limits import LimitSettings
from .root import Settings, variable_of
from .temporal import TemporalSettings
from .tools import ToolSettings
from .webhooks import WebhookSettings

__all__ = [
    "ApiSettings",
    "ArtifactSettings",
    "ChannelConfigError",
    "DingTalkSettings",
    "LarkSettings",
    "LimitSettings",
    "Settings",
    "TemporalSettings",
    "ToolSettings",
    "WebhookSettings",
    "variable_of",
]
