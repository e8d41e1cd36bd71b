"""The LangGraph graph of one agent step: `model ⇄ tools`, stopped before `tools`.

    START → model ─┬─ no tool calls ───────────────→ END      (an answer or a plan)
                   ├─ valid calls ─────────────────→ tools    (interrupted: never runs here)
                   ├─ invalid calls, first time ───→ reject → model
                   └─ unreadable reply, first time → model    (with a note saying why)

Compiled with `interrupt_before=["tools"]` and a `MemorySaver` that lives for one call (see
activities/langgraph_agent.py for why). Invalid calls (unknown tool, arguments that are not
valid JSON or fail the tool's JSON schema) go back to the model once as error `ToolMessage`s,
one per call of the turn; the reply langchain-openai cannot even read (arguments that are JSON
but not an object) goes back once as a note. Still bad the second time: the graph ends on the
bad reply (or raises `UnreadableReply`) and the adapter reports `VALIDATION_ERROR`.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from pydantic import ValidationError

from contracts import ToolDescriptor

from ..conversation import json_text

MAX_REASKS = 1
"""How many times an invalid or unreadable reply goes back to the model before the step fails."""


class StepState(MessagesState):
    """The conversation, and why the model was asked again this step (once at most)."""

    reasked: list[str]


class UnreadableReply(Exception):
    """The model's reply could not be read twice in a row (e.g. tool arguments not an object)."""


def tool_schemas(tools: dict[str, ToolDescriptor]) -> list[dict[str, Any]]:
    """The tools as OpenAI-style function declarations."""
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.arguments_schema},
        }
        for t in tools.values()
    ]


def call_problems(message: AIMessage, tools: dict[str, ToolDescriptor]) -> dict[str, str]:
    """What is wrong with each invalid call of `message`, by call id (empty: all valid)."""
    problems: dict[str, str] = {}
    for bad in message.invalid_tool_calls:
        problems[bad.get("id") or ""] = (
            f"the arguments of {bad.get('name')!r} are not valid JSON: {bad.get('args')!r} ({bad.get('error')})"
        )
    known = ", ".join(sorted(tools)) or "none"
    for call in message.tool_calls:
        descriptor = tools.get(call["name"])
        if descriptor is None:
            problems[call.get("id") or ""] = (
                f"there is no tool named {call['name']!r}; the tools are: {known}"
            )
            continue
        try:
            jsonschema.validate(call["args"], descriptor.arguments_schema)
        except jsonschema.ValidationError as err:
            where = "/".join(str(part) for part in err.absolute_path) or "(arguments)"
            problems[call.get("id") or ""] = (
                f"invalid arguments for {call['name']!r} at {where}: {err.message}"
            )
    return problems


def _run_tools(state: StepState) -> dict[str, Any]:
    """Never runs: the graph is interrupted before it; tools run in the workflow's `run_tool`."""
    raise RuntimeError("tools run only in the workflow's run_tool activity, after approval")


def build_graph(model: Any, tools: dict[str, ToolDescriptor]) -> Any:
    """The compiled graph for one step (`model`: a chat model, with tools bound or not)."""

    async def call_model(state: StepState) -> dict[str, Any]:
        try:
            return {"messages": [await model.ainvoke(state["messages"])]}
        except ValidationError as err:  # langchain-openai cannot build an AIMessage from the reply
            summary = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors()[:3])
            if len(state["reasked"]) >= MAX_REASKS:
                raise UnreadableReply(f"the model's reply could not be read twice: {summary}") from err
            note = (
                f"Your reply could not be read ({summary}): tool arguments must be a JSON object. Try again."
            )
            return {
                "messages": [HumanMessage(content=note)],
                "reasked": [*state["reasked"], f"the reply could not be read ({summary})"],
            }

    def reject(state: StepState) -> dict[str, Any]:
        last = state["messages"][-1]
        assert isinstance(last, AIMessage)
        problems = call_problems(last, tools)
        calls = [(c.get("id") or "", c["name"]) for c in last.tool_calls]
        calls += [(c.get("id") or "", c.get("name") or "") for c in last.invalid_tool_calls]
        results: list[BaseMessage] = []
        for call_id, name in calls:
            error = (
                problems.get(call_id) or "not run: another call of this turn was invalid; propose it again"
            )
            content = {"tool_id": name, "ok": False, "error": error}
            results.append(
                ToolMessage(content=json_text(content), tool_call_id=call_id, name=name, status="error")
            )
        return {"messages": results, "reasked": [*state["reasked"], "; ".join(problems.values())]}

    def route(state: StepState) -> str:
        last = state["messages"][-1]
        if isinstance(last, HumanMessage):
            return "model"
        if not isinstance(last, AIMessage) or not (last.tool_calls or last.invalid_tool_calls):
            return END
        if not call_problems(last, tools):
            return "tools"
        return "reject" if len(state["reasked"]) < MAX_REASKS else END

    graph = StateGraph(StepState)
    graph.add_node("model", call_model)
    graph.add_node("reject", reject)
    graph.add_node("tools", _run_tools)
    graph.add_edge(START, "model")
    graph.add_conditional_edges("model", route, ["model", "reject", "tools", END])
    graph.add_edge("reject", "model")
    graph.add_edge("tools", "model")
    return graph.compile(checkpointer=MemorySaver(), interrupt_before=["tools"])
