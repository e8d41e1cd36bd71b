"""Synapse contracts: Pydantic v2 models only, no logic.

Every workflow, activity, signal, update and query takes one of these models and returns
one, so fields can be added (with defaults) without breaking recorded histories.
"""

from .agent import (
    AgentIntent,
    AgentResult,
    AgentStepInput,
    FailureDetails,
    FailureType,
    FinalAnswer,
    ToolCallBatch,
    ToolCallRequest,
)
from .agents import AgentContextConfig, AgentGroup, AgentSpec, Framework
from .archive import ArchiveCursor, ArchiveKind, ArchivePage, MessagePage, MessagesQuery, MessageWindow
from .artifacts import ARTIFACT_ID_PATTERN, ArtifactInfo, ArtifactMode, ArtifactRef
from .base import Contract
from .blueprint import (
    Condition,
    ContextOverrides,
    DataFlow,
    EdgeDefinition,
    LoopDirective,
    PlanBlueprint,
    TaskDefinition,
    TaskDirectives,
    TaskUpdate,
)
from .channels import Delivery, OutboundMessage
from .context import ContextBuildConfig
from .errors import ErrorBody, ErrorType, FieldError, Principal
from .experience import ExperienceMatch, ExperienceOutcome, ExperienceRecord
from .intervention import InterventionRequest
from .messages import InboundMessage, UniversalMessage
from .session import (
    AuditTrail,
    CreateSessionRequest,
    MessageAccepted,
    MessageRequest,
    SessionConfig,
    SessionControl,
)
from .streaming import (
    AuditEntry,
    ExecutionMode,
    InteractionOutcome,
    InteractionRequest,
    InteractionResponse,
    InteractionType,
    LiveSession,
    TaskChunkType,
    TaskStreamChunk,
    WatchRequest,
    WatchResult,
)
from .tools import ApprovalPolicy, ToolAssessment, ToolDescriptor, ToolResult, ToolRun

__all__ = [
    "ARTIFACT_ID_PATTERN",
    "AgentContextConfig",
    "AgentGroup",
    "AgentIntent",
    "AgentResult",
    "AgentSpec",
    "AgentStepInput",
    "ApprovalPolicy",
    "ArchiveCursor",
    "ArchiveKind",
    "ArchivePage",
    "ArtifactInfo",
    "ArtifactMode",
    "ArtifactRef",
    "AuditEntry",
    "AuditTrail",
    "Condition",
    "ContextBuildConfig",
    "ContextOverrides",
    "Contract",
    "CreateSessionRequest",
    "DataFlow",
    "Delivery",
    "EdgeDefinition",
    "ErrorBody",
    "ErrorType",
    "ExecutionMode",
    "ExperienceMatch",
    "ExperienceOutcome",
    "ExperienceRecord",
    "FailureDetails",
    "FailureType",
    "FieldError",
    "FinalAnswer",
    "Framework",
    "InboundMessage",
    "InteractionOutcome",
    "InteractionRequest",
    "InteractionResponse",
    "InteractionType",
    "InterventionRequest",
    "LiveSession",
    "LoopDirective",
    "MessageAccepted",
    "MessagePage",
    "MessageRequest",
    "MessageWindow",
    "MessagesQuery",
    "OutboundMessage",
    "PlanBlueprint",
    "Principal",
    "SessionConfig",
    "SessionControl",
    "TaskChunkType",
    "TaskDefinition",
    "TaskDirectives",
    "TaskStreamChunk",
    "TaskUpdate",
    "ToolAssessment",
    "ToolCallBatch",
    "ToolCallRequest",
    "ToolDescriptor",
    "ToolResult",
    "ToolRun",
    "UniversalMessage",
    "WatchRequest",
    "WatchResult",
]
