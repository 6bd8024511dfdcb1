"""The documentation's generated pages: the CLI reference from the argparse parsers and the
HTTP API from the server's OpenAPI document, so neither can drift from the code."""
from __future__ import annotations

import argparse
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive
from sphinx.application import Sphinx


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse keeps the sub-commands only here
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _commands(parser: argparse.ArgumentParser, prog: str) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command of ``parser`` depth first, as (its full name, its parser)."""
    found = [(prog, parser)]
    for name, sub in _subparsers(parser).items():
        found += _commands(sub, f"{prog} {name}")
    return found


class CliReference(Directive):
    """``.. cli-reference::``: one section per command, its ``--help`` as printed."""

    def run(self) -> list[nodes.Node]:
        from relatedpages import cli

        out: list[nodes.Node] = []
        for name, parser in _commands(cli._parser(), "relatedpages"):
            section = nodes.section(ids=[nodes.make_id(name)])
            section += nodes.title(text=name)
            parser.formatter_class = lambda prog: argparse.HelpFormatter(prog, width=80)
            text = parser.format_help()
            block = nodes.literal_block(text, text)
            block["language"] = "text"  # help text, not code: no keyword colouring
            section += block
            out.append(section)
        return out


def _schema(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return " | ".join(str(v) for v in schema["enum"])
    return str(schema.get("type", "object"))


class OpenApiReference(Directive):
    """``.. openapi-reference::``: every path of ``openapi_document`` with its parameters
    and responses."""

    def run(self) -> list[nodes.Node]:
        from relatedpages.serve.app import openapi_document

        document = openapi_document(["block", "cocitation"])
        out: list[nodes.Node] = [nodes.paragraph(text=document["info"].get("description", ""))]
        for path, methods in document["paths"].items():
            for method, operation in methods.items():
                name = f"{method.upper()} {path}"
                section = nodes.section(ids=[nodes.make_id(name)])
                section += nodes.title(text=name)
                section += nodes.paragraph(text=operation.get("summary", ""))
                if operation.get("description"):
                    section += nodes.paragraph(text=operation["description"])
                items = nodes.bullet_list()
                for parameter in operation.get("parameters", []):
                    line = (f"{parameter['name']} ({parameter.get('in', 'query')}, "
                            f"{_schema(parameter.get('schema', {}))}"
                            f"{', required' if parameter.get('required') else ''}): "
                            f"{parameter.get('description', '')}")
                    items += nodes.list_item("", nodes.paragraph(text=line))
                body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
                for prop, schema in body.get("schema", {}).get("properties", {}).items():
                    items += nodes.list_item("", nodes.paragraph(
                        text=f"body field {prop} ({_schema(schema)})"))
                for status, response in operation.get("responses", {}).items():
                    items += nodes.list_item("", nodes.paragraph(
                        text=f"{status}: {response.get('description', '')}"))
                section += items
                out.append(section)
        for name, schema in document["components"]["schemas"].items():
            section = nodes.section(ids=[nodes.make_id(f"schema {name}")])
            section += nodes.title(text=f"schema {name}")
            items = nodes.bullet_list()
            for line in _properties(schema, ""):
                items += nodes.list_item("", nodes.paragraph(text=line))
            section += items
            out.append(section)
        return out


def _properties(schema: dict[str, Any], prefix: str) -> list[str]:
    """One line per property of an object schema, nested ones dotted (``related[].url``)."""
    lines = []
    for name, sub in schema.get("properties", {}).items():
        kind = sub.get("type", "object")
        kind = " or ".join(kind) if isinstance(kind, list) else kind
        lines.append(f"{prefix}{name}: {kind}" + (f" — {sub['description']}" if "description" in sub else ""))
        if kind == "array" and "properties" in sub.get("items", {}):
            lines += _properties(sub["items"], f"{prefix}{name}[].")
        elif "properties" in sub:
            lines += _properties(sub, f"{prefix}{name}.")
    return lines


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("cli-reference", CliReference)
    app.add_directive("openapi-reference", OpenApiReference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
