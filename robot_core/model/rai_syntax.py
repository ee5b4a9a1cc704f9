"""Tokenizer and parser for rai's graph syntax (``.g`` files), keeping line numbers for errors.

A ``.g`` file is a list of nodes ``key (parent ...) { attributes }`` (an optional ``:`` may
follow the parents, as newer rai files write it). Attributes are ``name: value``, ``name=value``
or a bare ``name`` (a flag that is true), separated by commas, semicolons or white space. A value
is a number, an array ``[1 2 3]``, a string ``"..."`` / ``'...'``, an angle-bracket text
``<...>`` (a transform chain or a file name, depending on the attribute), a word such as
``hingeX`` or ``true``, a name list ``(a b)`` or a nested ``{ ... }``. ``#`` starts a comment.
Top-level ``Include: 'file.g'`` nodes pull in another file (relative to the including one).

This module knows nothing about robots; ``rai_reader`` gives the nodes their meaning.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from robot_core.model.robot_model import RobotModelError, SourceRef

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-/]*")
_PUNCT = set("(){}[]:=,;")


@dataclass
class Token:
    kind: str  # word, number, string, angle, punct, end
    text: str
    line: int


@dataclass
class Value:
    """An attribute value. ``kind``: number, array, string, angle, word, bool, names, graph."""

    kind: str
    data: Any
    line: int


@dataclass
class Attr:
    key: str
    value: Value
    line: int


@dataclass
class Node:
    """One node: a frame declaration, or a top-level ``key: value`` entry (``value`` set)."""

    key: str
    parents: list[str]
    attrs: dict[str, Attr]
    line: int
    file: str
    parent_lines: list[int] = field(default_factory=list)
    value: Value | None = None

    def ref(self, element: str | None = None, line: int | None = None) -> SourceRef:
        return SourceRef(self.file, self.line if line is None else line, element or f"frame '{self.key}'")


def tokenize(text: str, source_file: str) -> list[Token]:
    tokens: list[Token] = []
    i, line, n = 0, 1, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
        elif c in "\"'":
            end = text.find(c, i + 1)
            if end < 0:
                raise RobotModelError(f"unterminated string starting with {c}", SourceRef(source_file, line, "string"))
            tokens.append(Token("string", text[i + 1 : end], line))
            line += text.count("\n", i, end)
            i = end + 1
        elif c == "<":
            end = text.find(">", i + 1)
            if end < 0:
                raise RobotModelError("unterminated '<' (missing '>')", SourceRef(source_file, line, "<...>"))
            tokens.append(Token("angle", text[i + 1 : end], line))
            line += text.count("\n", i, end)
            i = end + 1
        elif c in _PUNCT:
            tokens.append(Token("punct", c, line))
            i += 1
        else:
            m = _NUMBER.match(text, i)
            if m and (m.end() == n or not (text[m.end()].isalpha() or text[m.end()] == "_")):
                tokens.append(Token("number", m.group(0), line))
                i = m.end()
                continue
            m = _WORD.match(text, i)
            if not m:
                raise RobotModelError(f"unexpected character {c!r}", SourceRef(source_file, line, "syntax"))
            tokens.append(Token("word", m.group(0), line))
            i = m.end()
    tokens.append(Token("end", "", line))
    return tokens


class _Parser:
    def __init__(self, text: str, source_file: str):
        self.file = source_file
        self.tokens = tokenize(text, source_file)
        self.pos = 0

    # --- helpers ------------------------------------------------------------
    def peek(self, k: int = 0) -> Token:
        return self.tokens[min(self.pos + k, len(self.tokens) - 1)]

    def next(self) -> Token:
        tok = self.peek()
        self.pos += 1
        return tok

    def is_punct(self, ch: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind == "punct" and tok.text == ch

    def error(self, message: str, tok: Token, element: str) -> RobotModelError:
        found = "end of file" if tok.kind == "end" else repr(tok.text)
        return RobotModelError(f"{message} (found {found})", SourceRef(self.file, tok.line, element))

    # --- grammar ------------------------------------------------------------
    def nodes(self) -> list[Node]:
        out: list[Node] = []
        while self.peek().kind != "end":
            if self.is_punct(",") or self.is_punct(";"):
                self.next()
                continue
            out.append(self.node())
        return out

    def node(self) -> Node:
        tok = self.next()
        if tok.kind not in ("word", "string"):
            raise self.error("expected a frame name", tok, "syntax")
        node = Node(tok.text, [], {}, tok.line, self.file)
        element = f"frame '{tok.text}'"
        if self.is_punct("("):
            self.next()
            while not self.is_punct(")"):
                p = self.next()
                if p.kind not in ("word", "string"):
                    raise self.error(f"expected a parent frame name or ')' after '{tok.text} ('", p, element)
                node.parents.append(p.text)
                node.parent_lines.append(p.line)
                if self.is_punct(","):
                    self.next()
            self.next()
        colon = False
        if self.is_punct(":") or self.is_punct("="):
            self.next()
            colon = True
        if self.is_punct("{"):
            self.next()
            node.attrs = self.attributes(element, "}")
            return node
        if colon and not node.parents:
            node.value = self.value(tok.text, element)
            return node
        raise self.error(f"expected '{{' to open the attributes of '{tok.text}'", self.peek(), element)

    def attributes(self, element: str, closer: str) -> dict[str, Attr]:
        attrs: dict[str, Attr] = {}
        while True:
            tok = self.peek()
            if tok.kind == "punct" and tok.text == closer:
                self.next()
                return attrs
            if tok.kind == "punct" and tok.text in ",;":
                self.next()
                continue
            if tok.kind == "end":
                raise self.error(f"missing '{closer}' closing the attributes", tok, element)
            if tok.kind not in ("word", "string"):
                raise self.error("expected an attribute name", tok, element)
            self.next()
            key = tok.text
            if key in attrs:
                raise RobotModelError(
                    f"attribute '{key}' given twice (first on line {attrs[key].line})",
                    SourceRef(self.file, tok.line, f"{element} attribute '{key}'"),
                )
            if self.is_punct(":") or self.is_punct("="):
                self.next()
                val = self.value(key, element)
            else:
                val = Value("bool", True, tok.line)
            attrs[key] = Attr(key, val, tok.line)

    def value(self, key: str, element: str) -> Value:
        tok = self.next()
        where = f"{element} attribute '{key}'"
        if tok.kind == "number":
            return Value("number", float(tok.text), tok.line)
        if tok.kind == "string":
            return Value("string", tok.text, tok.line)
        if tok.kind == "angle":
            return Value("angle", tok.text, tok.line)
        if tok.kind == "word":
            low = tok.text.lower()
            if low in ("true", "false"):
                return Value("bool", low == "true", tok.line)
            return Value("word", tok.text, tok.line)
        if tok.kind == "punct" and tok.text == "[":
            nums: list[float] = []
            while not self.is_punct("]"):
                t = self.next()
                if t.kind == "number":
                    nums.append(float(t.text))
                elif t.kind == "punct" and t.text in ",;":
                    continue
                else:
                    raise self.error("expected a number or ']' in an array", t, where)
            self.next()
            return Value("array", nums, tok.line)
        if tok.kind == "punct" and tok.text == "(":
            names: list[str] = []
            while not self.is_punct(")"):
                t = self.next()
                if t.kind not in ("word", "string"):
                    raise self.error("expected a name or ')' in a name list", t, where)
                names.append(t.text)
            self.next()
            return Value("names", names, tok.line)
        if tok.kind == "punct" and tok.text == "{":
            return Value("graph", self.attributes(where, "}"), tok.line)
        raise self.error("expected a value", tok, where)


def parse_graph(text: str, source_file: str = "<string>", _seen: tuple[str, ...] = ()) -> list[Node]:
    """Parse ``.g`` text into nodes, expanding ``Include`` entries (relative to ``source_file``)."""
    out: list[Node] = []
    for node in _Parser(text, source_file).nodes():
        if node.value is not None and node.key == "Include":
            out.extend(_include(node, source_file, _seen))
        elif node.value is not None:
            raise RobotModelError(
                f"unsupported top-level entry '{node.key}: ...'; frames are written 'name (parent) {{ ... }}'",
                node.ref(f"entry '{node.key}'"),
            )
        else:
            out.append(node)
    return out


def _include(node: Node, source_file: str, seen: tuple[str, ...]) -> list[Node]:
    val = node.value
    assert val is not None
    if val.kind not in ("string", "angle", "word"):
        raise RobotModelError("Include needs a file name", node.ref("Include"))
    base = os.path.dirname(source_file) if os.path.isfile(source_file) else os.getcwd()
    path = os.path.normpath(os.path.join(base, str(val.data).strip()))
    if path in seen or os.path.abspath(source_file) == os.path.abspath(path):
        raise RobotModelError(f"Include of '{path}' is recursive", node.ref("Include"))
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise RobotModelError(f"cannot read included file '{path}': {exc.strerror}", node.ref("Include")) from exc
    return parse_graph(text, path, (*seen, os.path.abspath(source_file), path))
