"""GBNF (llama.cpp's grammar format) pieces that are not about quoting: string
literals, and the JSON of one tool call matching its tool's parameter schema (the
grammar `llm.tool_grammar` gives backends that call tools through a grammar).
Every function is pure and O(size of its inputs)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

__all__ = ["json_schema_rules", "literal", "tool_call_grammar"]

JSON_STRING_CHARS = 500


def literal(text: str) -> str:
    """Return `text` as a GBNF string literal (JSON escaping is valid GBNF)."""
    return json.dumps(text, ensure_ascii=False)


# --- JSON: tool calls ----------------------------------------------------------------

_JSON_COMMON = f"""
ws ::= [ \\t\\n]{{0,20}}
json-string ::= "\\"" ([^"\\\\\\x00-\\x1f] | "\\\\" ["\\\\/bfnrt]){{0,{JSON_STRING_CHARS}}} "\\""
json-number ::= "-"? [0-9]{{1,15}} ("." [0-9]{{1,15}})?
json-integer ::= "-"? [0-9]{{1,15}}
json-boolean ::= "true" | "false"
json-null ::= "null"
json-value ::= json-string | json-number | json-boolean | json-null
"""

_SCALARS = {
    "string": "json-string",
    "number": "json-number",
    "integer": "json-integer",
    "boolean": "json-boolean",
    "null": "json-null",
}


class _RuleWriter:
    """Names and collects the rules of a JSON grammar as a schema is walked."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.rules: dict[str, str] = {}

    def add(self, hint: str, body: str) -> str:
        name = f"{self.prefix}-{hint}-{len(self.rules)}"
        self.rules[name] = body
        return name

    def value(self, schema: dict[str, Any], hint: str) -> str:
        """The rule (a name or an inline expression) matching `schema`."""
        if "const" in schema:
            return literal(json.dumps(schema["const"]))
        if "enum" in schema:
            return f"({' | '.join(literal(json.dumps(v)) for v in schema['enum'])})"
        kind = schema.get("type")
        if isinstance(kind, list):
            return f"({' | '.join(self.value({**schema, 'type': k}, hint) for k in kind)})"
        if kind in _SCALARS:
            return _SCALARS[kind]
        if kind == "array":
            item = self.value(schema.get("items", {}), hint + "-item")
            return self.add(hint, f'"[" ws ({item} (ws "," ws {item})*)? ws "]"')
        if kind == "object":
            return self.object(schema, hint)
        return "json-value"

    def object(self, schema: dict[str, Any], hint: str) -> str:
        """An object with its required properties, in the schema's order; optional
        properties may follow each in turn (a model need not write them)."""
        properties: dict[str, Any] = schema.get("properties", {})
        required = [key for key in properties if key in schema.get("required", ())]
        optional = [key for key in properties if key not in required]
        parts = [
            f'{literal(json.dumps(key))} ws ":" ws {self.value(properties[key], key)}'
            for key in required
        ]
        body = ' ws "," ws '.join(parts)
        for key in optional:
            member = f'{literal(json.dumps(key))} ws ":" ws {self.value(properties[key], key)}'
            body = f'{body} (ws "," ws {member})?' if body else f"({member})?"
        return self.add(hint, f'"{{" ws {body} ws "}}"' if body else '"{" ws "}"')


def json_schema_rules(schema: dict[str, Any], prefix: str) -> tuple[str, dict[str, str]]:
    """Return (the rule matching `schema`, the named rules it needs) for the JSON
    Schema subset tool parameters use: objects (required properties first, in order;
    no others), arrays, `enum`, `const`, and the scalar types, alone or in a list.
    Unknown keywords allow any JSON scalar. Rule names start with `prefix`."""
    writer = _RuleWriter(prefix)
    return writer.value(schema, "args"), writer.rules


def tool_call_grammar(tools: Sequence[tuple[str, dict[str, Any]]]) -> str:
    """One tool call as a JSON object, `{"tool": NAME, "arguments": {...}}`, its
    arguments matching that tool's parameter schema. `tools` are (name, JSON Schema)
    pairs. Raises `ValueError` when `tools` is empty."""
    if not tools:
        raise ValueError("a tool-call grammar needs at least one tool")
    calls = []
    rules: dict[str, str] = {}
    for number, (name, schema) in enumerate(tools):
        arguments, needed = json_schema_rules(schema, f"t{number}")
        rules.update(needed)
        calls.append(
            f'"{{" ws "\\"tool\\"" ws ":" ws {literal(json.dumps(name))} ws "," ws '
            f'"\\"arguments\\"" ws ":" ws {arguments} ws "}}"'
        )
    lines = [f"root ::= {' | '.join(f'({call})' for call in calls)}"]
    lines += [f"{name} ::= {body}" for name, body in rules.items()]
    return "\n".join(lines) + _JSON_COMMON
