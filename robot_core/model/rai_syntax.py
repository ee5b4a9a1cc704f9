"""Tokenizer and parser for rai's graph syntax (``.g`` files), keeping line numbers for errors.

A ``.g`` file is a list of nodes ``key (parent ...) { attributes }`` (an optional ``:`` may
follow the parents, as newer rai files write it). Attributes are ``name: value``, ``name=value``
or a bare ``name`` (a flag that is true; ``name!`` is false), separated by commas, semicolons or white space. A value
is a number, an array ``[1 2 3]``, a string ``"..."`` / ``'...'``, an angle-bracket text
``<...>`` (a transform chain or a file name, depending on the attribute), a word such as
``hingeX`` or ``true``, a name list ``(a b)`` or a nested ``{ ... }``. ``#`` starts a comment.

Names are read as rai's Graph reads keys: any run of characters other than white space and
``: , ; [ ] { } ( ) < = ! ~ ' " #``, so ``Body_Torso>HNP`` or ``>iiwa_joint_1`` are names. A key
of several words on one line (``Edit arm (base)``, ``frame arm``) is tags then the name; a node
without a name, ``(parent) { ... }``, gets one later (``rai_reader``). Directives, as rai's Graph
applies them:

* ``Include: 'file.g'`` (or ``<file.g>``) reads another file, relative to the including one;
* ``Prefix: "l_"`` puts ``l_`` in front of the names of the nodes that follow and of the nodes of
  the next ``Include`` (and of their ``mimic`` targets); rai drops the prefix after that Include,
  and ``Prefix: False`` drops it too;
* ``Delete: name`` removes the frame ``name`` read before (its children then have no parent);
* ``Edit name (new_parent): { ... }`` changes an existing frame once its file has been read: its
  attributes are merged (an Edit's pose replaces the frame's pose) and, with a parent given, the
  frame is moved there. An Edit of a frame that does not exist defines it, as in rai (with a
  warning).

This module knows nothing about robots; ``rai_reader`` gives the nodes their meaning.
"""

from __future__ import annotations

import os
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

from robot_core.model.robot_model import RobotModelError, RobotModelWarning, SourceRef

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
# rai's Graph ends a key at these characters (and at white space); everything else belongs to the name.
_NAME_STOP = ":,;[]{}()<=!~'\"#"
_WORD = re.compile(r"[^\s" + re.escape(_NAME_STOP) + r"]+")
_PUNCT = set("(){}[]:=,;")
# Tags in front of a frame name that rai ignores for frames (old files write 'frame name (parent)').
_IGNORED_TAGS = ("frame", "Frame")


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
    file: str | None = None  # set when an Edit in another file brought the attribute


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
    tags: list[str] = field(default_factory=list)
    parents_file: str | None = None  # set when an Edit in another file gave the parents

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
        elif c == "!" and tokens and tokens[-1].kind == "word" and i > 0 and not text[i - 1].isspace():
            tokens.append(Token("punct", c, line))  # 'name!' is rai's flag set to false
            i += 1
        else:
            m = _NUMBER.match(text, i)
            if m and (m.end() == n or not _WORD.match(text, m.end())):
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
        tok = self.peek()
        words: list[Token] = []
        # A key is the words on the line of its first word, up to '(', ':', '=' or '{' (rai ends keys at a newline).
        while self.peek().kind in ("word", "string") and (not words or self.peek().line == words[0].line):
            words.append(self.next())
        if not words and not self.is_punct("("):
            raise self.error("expected a frame name", tok, "syntax")
        name = words[-1].text if words else ""
        line = words[-1].line if words else tok.line
        node = Node(name, [], {}, line, self.file, tags=[w.text for w in words[:-1]])
        element = f"frame '{name}'" if words else "unnamed frame"
        if self.is_punct("("):
            self.next()
            while not self.is_punct(")"):
                p = self.next()
                if p.kind not in ("word", "string"):
                    raise self.error(f"expected a parent frame name or ')' after '{name} ('", p, element)
                node.parents.append(p.text)
                node.parent_lines.append(p.line)
                if self.is_punct(","):
                    self.next()
            self.next()
        if len(words) == 1 and not node.parents and self.peek().kind == "angle":
            node.value = self.value(name, element)  # 'Include <file.g>': rai needs no colon before '<'
            return node
        if words and not node.parents and self.is_punct("!"):
            node.value = Value("bool", False, self.next().line)  # 'Prefix!' is 'Prefix: false'
            return node
        colon = False
        if self.is_punct(":") or self.is_punct("="):
            self.next()
            colon = True
        if self.is_punct("{"):
            node.attrs = self.attributes(element, "}", self.next().line)
            return node
        if colon and not node.parents and words:
            node.value = self.value(name, element)
            return node
        raise self.error(f"expected '{{' to open the attributes of {element}", self.peek(), element)

    def unclosed(self, element: str, opened: int, tok: Token) -> RobotModelError:
        """The '{' opened on line ``opened`` is never closed: reported at that line, where the fix goes."""
        found = "the end of the file" if tok.kind == "end" else f"'{tok.text}' on line {tok.line}"
        return RobotModelError(f"'{{' is not closed by a matching '}}' (reached {found})",
                               SourceRef(self.file, opened, element))

    def attributes(self, element: str, closer: str, opened: int) -> dict[str, Attr]:
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
                raise self.unclosed(element, opened, tok)
            if tok.kind not in ("word", "string"):
                raise self.error("expected an attribute name", tok, element)
            if self.is_punct("(", 1) or (self.peek(1).kind == "word" and self.is_punct("(", 2)
                                         and self.peek(1).line == tok.line):
                # 'name (parent)' inside attributes: the next frame began before this '{' was closed.
                raise self.unclosed(element, opened, tok)
            self.next()
            key = tok.text
            first = attrs.get(key)
            if self.is_punct(":") or self.is_punct("="):
                self.next()
                val = self.value(key, element)
            elif self.is_punct("!"):
                val = Value("bool", False, self.next().line)
            elif self.is_punct("[") or self.is_punct("{") or self.peek().kind == "angle":
                val = self.value(key, element)  # rai reads 'size[1 2]', 'Q<t(0 0 1)>' without a colon too
            else:
                val = Value("bool", True, tok.line)
            if first is not None:
                warnings.warn(f"{SourceRef(self.file, tok.line, f'{element} attribute {key!r}')}: given twice (first "
                              f"on line {first.line}); the first is used, as rai's lookup finds it",
                              RobotModelWarning, stacklevel=6)
                continue
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
            return Value("graph", self.attributes(where, "}", tok.line), tok.line)
        raise self.error("expected a value", tok, where)


def parse_graph(text: str, source_file: str = "<string>") -> list[Node]:
    """Parse ``.g`` text into frame nodes, applying ``Include``, ``Prefix`` and ``Edit`` as rai's Graph does."""
    out: list[Node] = []
    _read_into(out, text, source_file, ())
    _name_unnamed(out)
    return _parents_first(out)


def _parents_first(nodes: list[Node]) -> list[Node]:
    """Order nodes so that parents come before their children (rai resolves parents once a file is read, so a
    parent may follow its child), keeping the file's order otherwise; a kinematic cycle is an error."""
    by_name: dict[str, Node] = {}
    for n in nodes:
        by_name.setdefault(n.key, n)
    out: list[Node] = []
    done: set[int] = set()
    path: list[Node] = []

    def visit(n: Node) -> None:
        if id(n) in done:
            return
        if any(n is p for p in path):
            cycle = [p.key for p in path[next(i for i, p in enumerate(path) if p is n):]] + [n.key]
            # Reported where n names its parent: the reference that closed the cycle when n was read first.
            where = SourceRef(n.parents_file or n.file, n.parent_lines[0] if n.parent_lines else n.line,
                              f"frame '{n.key}'")
            raise RobotModelError(f"kinematic cycle: {' -> '.join(reversed(cycle))} (each frame is the parent of the "
                                  "next)", where)
        path.append(n)
        for parent in n.parents:
            if parent in by_name:
                visit(by_name[parent])
        path.pop()
        done.add(id(n))
        out.append(n)

    for n in nodes:
        visit(n)
    return out


def _name_unnamed(nodes: list[Node]) -> None:
    """Frames written ``(parent) { ... }`` are called ``_<index>`` (their place in the file), as rai names them."""
    unnamed = [i for i, n in enumerate(nodes) if not n.key]
    if not unnamed:
        return
    taken = {n.key for n in nodes}
    for i in unnamed:
        name = f"_{i}"
        while name in taken:
            name += "_"
        nodes[i].key = name
        taken.add(name)
    first = nodes[unnamed[0]]
    named = ", ".join(f"{nodes[i].file}:{nodes[i].line} -> '{nodes[i].key}'" for i in unnamed[:3])
    more = f" and {len(unnamed) - 3} more" if len(unnamed) > 3 else ""
    warnings.warn(f"{SourceRef(first.file, first.line, 'unnamed frame')}: {len(unnamed)} frame(s) without a name, "
                  f"named _<index> as rai does ({named}{more})", RobotModelWarning, stacklevel=3)


def _read_into(out: list[Node], text: str, source_file: str, seen: tuple[str, ...]) -> None:
    """Append the frames of one file to ``out`` (which holds the frames read before it), then apply its Edits."""
    prefix = ""
    edits: list[Node] = []
    for node in _Parser(text, source_file).nodes():
        if node.value is not None and node.key == "Include":
            first = len(out)
            _include(out, node, source_file, seen)
            if prefix:
                _prefix_included(out[first:], prefix)
                prefix = ""  # rai drops the prefix after the Include it applied to
        elif node.value is not None and node.key == "Prefix":
            prefix = _prefix_value(node)
        elif node.value is not None and node.key == "Delete" and node.value.kind in ("word", "string"):
            _delete(out, node)
        elif node.value is not None:
            raise RobotModelError(
                f"unsupported top-level entry '{node.key}: ...'; frames are written 'name (parent) {{ ... }}'",
                node.ref(f"entry '{node.key}'"))
        else:
            if node.key:
                node.key = prefix + node.key  # parents keep their names, as in rai
            if "Edit" in node.tags:
                edits.append(node)
            else:
                _check_tags(node)
                out.append(node)
    for edit in edits:
        _apply_edit(out, edit)


def _delete(out: list[Node], node: Node) -> None:
    """``Delete: name`` removes the frames of that name read so far, as rai's Graph does while reading."""
    assert node.value is not None
    name = str(node.value.data).strip()
    kept = [n for n in out if n.key != name]
    if len(kept) == len(out):
        warnings.warn(f"{node.ref('Delete')}: no frame '{name}' to delete (rai ignores this too)",
                      RobotModelWarning, stacklevel=5)
    out[:] = kept


def _prefix_value(node: Node) -> str:
    val = node.value
    assert val is not None
    if val.kind == "bool" and val.data is False:
        return ""
    if val.kind in ("string", "word") and str(val.data) not in ("False", "false"):
        return str(val.data)
    warnings.warn(f"{node.ref('Prefix')}: a Prefix is a string (or False to end it), got {val.kind} {val.data!r}; "
                  "ignored, as rai does", RobotModelWarning, stacklevel=5)
    return ""


def _prefix_included(nodes: list[Node], prefix: str) -> None:
    """rai prefixes an included file's nodes after reading it: their names, their parents among them, mimic targets."""
    names = {n.key for n in nodes}
    for n in nodes:
        n.parents = [prefix + p if p in names else p for p in n.parents]
        n.key = prefix + n.key if n.key else n.key
        mimic = n.attrs.get("mimic")
        if mimic is not None and mimic.value.kind in ("string", "word", "angle"):
            mimic.value = Value(mimic.value.kind, prefix + str(mimic.value.data).strip(), mimic.value.line)


def _check_tags(node: Node) -> None:
    unknown = [t for t in node.tags if t not in _IGNORED_TAGS]
    if unknown:
        warnings.warn(f"{node.ref()}: the words {unknown} in front of the frame name are ignored "
                      "(rai reads them as tags; only 'Edit' has a meaning for frames)", RobotModelWarning, stacklevel=5)


_POSE_KEYS = ("Q", "X", "pose", "rel")


def _apply_edit(out: list[Node], edit: Node) -> None:
    """Merge an ``Edit name (parent): {...}`` into the frame ``name`` read before (rai applies Edits per file)."""
    target = next((n for n in out if n.key == edit.key and edit.key), None)
    if target is None:
        warnings.warn(f"{edit.ref()}: Edit of a frame that does not exist; it defines the frame, as rai does",
                      RobotModelWarning, stacklevel=4)
        edit.tags = [t for t in edit.tags if t != "Edit"]
        out.append(edit)
        return
    if edit.parents:
        target.parents, target.parent_lines = list(edit.parents), list(edit.parent_lines)
        target.parents_file = edit.file if edit.file != target.file else None
    if any(k in edit.attrs for k in _POSE_KEYS):
        for k in _POSE_KEYS:
            target.attrs.pop(k, None)
    for key, attr in edit.attrs.items():
        target.attrs[key] = Attr(key, attr.value, attr.line, edit.file if edit.file != target.file else attr.file)


def _include(out: list[Node], node: Node, source_file: str, seen: tuple[str, ...]) -> None:
    val = node.value
    assert val is not None
    if val.kind not in ("string", "angle", "word"):
        raise RobotModelError("Include needs a file name", node.ref("Include"))
    base = os.path.dirname(source_file) if os.path.isfile(source_file) else os.getcwd()
    path = os.path.normpath(os.path.join(base, str(val.data).strip()))
    if path in seen or os.path.abspath(source_file) == os.path.abspath(path):
        raise RobotModelError(f"Include of '{path}' is recursive", node.ref("Include"))
    if path.endswith((".yml", ".yaml")):
        raise RobotModelError(f"Include of '{path}': rai's YAML robot files are not read here, only .g files",
                              node.ref("Include"))
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise RobotModelError(f"cannot read included file '{path}': {exc.strerror}", node.ref("Include")) from exc
    _read_into(out, text, path, (*seen, os.path.abspath(source_file), path))
