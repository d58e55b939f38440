"""The tools of the `agent` mode: their specifications for the model, and checking
the arguments the model sends.

The model orchestrates; these tools compose the answer. They hand the model refs,
labels and pointers (`r1`), never passages or table rows, and the model passes
pointers back, never data.
"""

from __future__ import annotations

import json
from typing import Any, get_args

from quoteproof.llm.base import ToolSpec
from quoteproof.model import AggregateOp, ToolCall

_STRING = {"type": "string"}

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search",
        "Search the document collection. Returns refs and labels of passages (not their text).",
        {"type": "object", "properties": {"query": _STRING}, "required": ["query"]},
    ),
    ToolSpec(
        "quote",
        "Show a passage verbatim in the answer. Without a hint the whole passage is "
        "quoted; with a hint (the exact words to quote from it) only those words are. "
        "The words shown are always the source's own.",
        {
            "type": "object",
            "properties": {"ref": _STRING, "hint": _STRING},
            "required": ["ref"],
        },
    ),
    ToolSpec(
        "table_query",
        "Select rows of a table. Returns a pointer to the result set and its row count.",
        {
            "type": "object",
            "properties": {
                "table": _STRING,
                "filters": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "column": _STRING,
                            "op": {
                                "type": "string",
                                "enum": ["=", "!=", "<", "<=", ">", ">=", "contains"],
                            },
                            "value": {"type": ["string", "number", "boolean", "null"]},
                        },
                        "required": ["column", "op", "value"],
                    },
                },
                "columns": {"type": "array", "items": _STRING},
            },
            "required": ["table"],
        },
    ),
    ToolSpec(
        "aggregate",
        "Compute count, sum, mean, min, max or distinct over a column of a result set "
        "named by its pointer. Returns a new pointer and the value.",
        {
            "type": "object",
            "properties": {
                "pointer": _STRING,
                "op": {"type": "string", "enum": list(get_args(AggregateOp))},
                "column": _STRING,
            },
            "required": ["pointer", "op"],
        },
    ),
    ToolSpec(
        "note",
        "Add a short sentence of your own to the answer, shown labelled as generated. "
        "End it with [REF] markers for the passages, or [r1] pointers for the data "
        "results, it relies on.",
        {"type": "object", "properties": {"text": _STRING}, "required": ["text"]},
    ),
    ToolSpec(
        "escalate",
        "Hand the question to a person, with the reason, when it cannot be answered "
        "safely from the sources and tables.",
        {"type": "object", "properties": {"reason": _STRING}, "required": ["reason"]},
    ),
    ToolSpec(
        "finish",
        "End the answer.",
        {"type": "object", "properties": {}},
    ),
)

TOOL_NAMES = tuple(tool.name for tool in TOOLS)
_SPECS = {tool.name: tool for tool in TOOLS}


class ToolArgumentError(ValueError):
    """The model called a tool that does not exist or with arguments that do not fit."""


def tool_arguments(call: ToolCall) -> dict[str, Any]:
    """Return `call`'s arguments as a dict, checked against its tool's specification:
    required keys present, no unknown keys, strings where strings are wanted.

    Raises `ToolArgumentError` with a message the model can act on.
    """
    spec = _SPECS.get(call.name)
    if spec is None:
        raise ToolArgumentError(
            f"unknown tool '{call.name}'; the tools are: {', '.join(TOOL_NAMES)}"
        )
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(f"{call.name}: arguments are not valid JSON ({exc})") from None
    if not isinstance(arguments, dict):
        raise ToolArgumentError(f"{call.name}: arguments must be a JSON object")
    properties: dict[str, Any] = spec.parameters.get("properties", {})
    for key in spec.parameters.get("required", []):
        if key not in arguments:
            raise ToolArgumentError(f"{call.name}: the argument '{key}' is required")
    for key, value in arguments.items():
        if key not in properties:
            allowed = ", ".join(properties) or "none"
            raise ToolArgumentError(f"{call.name}: unknown argument '{key}' (arguments: {allowed})")
        if properties[key] == _STRING and not isinstance(value, str):
            raise ToolArgumentError(f"{call.name}: '{key}' must be a string")
    return arguments
