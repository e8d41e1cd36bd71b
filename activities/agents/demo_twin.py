"""The demo rules as a chat model's reply, for the frameworks' offline demo twins.

`Agent:demo-langgraph` and `Agent:demo-autogen` run their framework end to end with a stand-in
model that answers by the demo rules (activities/agents/demo.py), with no network and the same
intents as `Agent:demo`. Each twin only maps its framework's messages to `conversation.Turn`s
and `DemoReply` back to its own reply class:

* a tool call → `call` (id `demo_<n>`, numbered by how many assistant turns precede it, so the
  same conversation always gets the same id);
* a plan → text `plan: {json}`, which the adapters turn into a `PlanBlueprint`;
* an answer → its text (a JSON value as JSON text);
* a `FAILURE` (`input_data.fail`) → raises `DemoModelFailure` with the rules' details.

The rules' reasoning is `thought`. The rules decide the call; a tool the agent may not use is
refused just as `Agent:demo` refuses it.
"""

from __future__ import annotations

from dataclasses import dataclass

from contracts import AgentStepInput, FailureDetails, FinalAnswer, PlanBlueprint, ToolCallRequest

from . import demo
from .conversation import PLAN_PREFIX, Call, Turn, json_text, universal


class DemoModelFailure(Exception):
    """The demo rules returned a `FAILURE` (e.g. `input_data.fail`); carries their details."""

    def __init__(self, details: FailureDetails, thought: str) -> None:
        super().__init__(details.message)
        self.details = details
        self.thought = thought


@dataclass(frozen=True)
class DemoReply:
    """What the model says: `text`, or one tool `call`; and why (`thought`)."""

    thought: str
    text: str = ""
    call: Call | None = None


def demo_reply(conversation: list[Turn], tool_names: list[str], agent_id: str) -> DemoReply:
    """The demo rules' reply to `conversation`, as agent `agent_id` with `tool_names` bound.

    Raises:
        DemoModelFailure: The rules returned a `FAILURE`.
    """
    messages, input_data = universal(conversation)
    step = AgentStepInput(
        agent_id=agent_id, owner_id="twin", messages=messages, tools=tool_names, input_data=input_data
    )
    result = demo.decide(step)
    thought = result.output.thought
    if result.status == "FAILURE":
        raise DemoModelFailure(
            result.failure_details or FailureDetails(type="LLM_REFUSAL", message=thought), thought
        )
    intent = result.output.intent
    if isinstance(intent, ToolCallRequest):
        number = sum(turn.kind in ("assistant", "calls") for turn in conversation)
        return DemoReply(thought, call=Call(f"demo_{number}", intent.tool_id, intent.arguments))
    if isinstance(intent, PlanBlueprint):
        return DemoReply(thought, text=f"{PLAN_PREFIX} {intent.model_dump_json(exclude_defaults=True)}")
    return DemoReply(thought, text=json_text(intent.content if isinstance(intent, FinalAnswer) else None))
