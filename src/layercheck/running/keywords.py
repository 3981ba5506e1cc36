"""`-k EXPR`: select targets and checks by substring, with pytest's expression grammar.

    expression: expr? end
    expr:       and_expr ("or" and_expr)*
    and_expr:   not_expr ("and" not_expr)*
    not_expr:   "not" not_expr | "(" expr ")" | word
    word:       letters, digits, _ and any of : + - . [ ] \\ /

A word is true of a check of a target when it is a substring of the target's label or of the
check's name, case-insensitively (as pytest's -k is since 5.4): the expression is judged for
each check, as if on the text "LABEL CHECK". A target is checked when the expression selects
at least one of its checks, and then only those; a check it does not select is absent from
the reports, as one that --checks leaves out. An empty expression selects everything, as
pytest's does (`-k "$EXPR"` with an empty variable in a CI script). A file that could not be
imported is reported whatever the expression (as pytest reports collection errors): what it
would have defined is not known.

pytest is not a runtime dependency: the grammar is written again here, not imported.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from layercheck.errors import UsageError
from layercheck.running.runner import select_checks
from layercheck.safetext import bounded, visible
from layercheck.settings.options import Options

__all__ = ["Keyword", "parse_keyword"]

_WORD = re.compile(r"(?:\w|:|\+|-|\.|\[|\]|\\|/)+")
_RESERVED = ("and", "or", "not")
# Nesting (of `not` and parentheses) past which an expression is refused: the parser and the
# matcher it builds recurse once per level, and Python's stack is finite.
_MAX_DEPTH = 100


class _Token(Enum):
    LEFT = "("
    RIGHT = ")"
    AND = "and"
    OR = "or"
    NOT = "not"
    WORD = "word"
    END = "end of input"


@dataclass(frozen=True)
class _Lexeme:
    kind: _Token
    text: str
    column: int  # from 1, as a person counts


# An expression, compiled: true or false of one (label, check) pair, both lower-cased.
_Matcher = Callable[[str, str], bool]


def _lex(text: str) -> list[_Lexeme]:
    tokens: list[_Lexeme] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char.isspace():
            position += 1
        elif char in "()":
            tokens.append(_Lexeme(_Token(char), char, position + 1))
            position += 1
        elif match := _WORD.match(text, position):
            word = match.group()
            kind = _Token(word) if word in _RESERVED else _Token.WORD
            tokens.append(_Lexeme(kind, word, position + 1))
            position = match.end()
        else:
            raise _ParseError(position + 1, f"unexpected character {char!r}")
    tokens.append(_Lexeme(_Token.END, "", len(text) + 1))
    return tokens


class _ParseError(Exception):
    def __init__(self, column: int, problem: str):
        super().__init__(problem)
        self.column = column


class _Parser:
    """Recursive descent over the grammar of the module's docstring."""

    def __init__(self, text: str):
        self.tokens = _lex(text)
        self.at = 0
        self.depth = 0

    def _peek(self) -> _Lexeme:
        return self.tokens[self.at]

    def _take(self, kind: _Token) -> _Lexeme | None:
        token = self.tokens[self.at]
        if token.kind is not kind:
            return None
        self.at += 1
        return token

    def expression(self) -> _Matcher:
        if self._take(_Token.END):
            return lambda label, check: True
        matcher = self._or()
        token = self._peek()
        if token.kind is not _Token.END:
            raise _ParseError(token.column, f"expected and, or or the end; got {token.text!r}")
        return matcher

    def _or(self) -> _Matcher:
        matcher = self._and()
        while self._take(_Token.OR):
            left, right = matcher, self._and()
            matcher = _either(left, right)
        return matcher

    def _and(self) -> _Matcher:
        matcher = self._not()
        while self._take(_Token.AND):
            left, right = matcher, self._not()
            matcher = _both(left, right)
        return matcher

    def _not(self) -> _Matcher:
        token = self._peek()
        if token.kind not in (_Token.NOT, _Token.LEFT):
            return self._word()
        self.depth += 1
        if self.depth > _MAX_DEPTH:
            raise _ParseError(token.column, f"nested more than {_MAX_DEPTH} levels deep")
        try:
            if self._take(_Token.NOT):
                inner = self._not()
                return lambda label, check: not inner(label, check)
            self._take(_Token.LEFT)
            matcher = self._or()
            if not self._take(_Token.RIGHT):
                token = self._peek()
                raise _ParseError(token.column, f"expected ')'; got {token.text or token.kind.value!r}")
            return matcher
        finally:
            self.depth -= 1

    def _word(self) -> _Matcher:
        token = self._take(_Token.WORD)
        if token is None:
            token = self._peek()
            raise _ParseError(token.column, f"expected a word, not or '('; got {token.text or token.kind.value!r}")
        word = token.text.lower()
        return lambda label, check: word in label or word in check


def _either(left: _Matcher, right: _Matcher) -> _Matcher:
    return lambda label, check: left(label, check) or right(label, check)


def _both(left: _Matcher, right: _Matcher) -> _Matcher:
    return lambda label, check: left(label, check) and right(label, check)


@dataclass(frozen=True)
class Keyword:
    """A parsed `-k` expression (`parse_keyword`)."""

    text: str
    matcher: _Matcher = dataclasses.field(repr=False, compare=False)

    def matches(self, label: str, check: str) -> bool:
        """Whether the expression selects `check` of the target `label`."""
        return self.matcher(label.lower(), check.lower())

    def narrow(self, label: str, options: Options) -> Options | None:
        """`options` with only the checks the expression selects of the target `label` among
        those the options select; None when it selects none (the target is left out)."""
        names = tuple(check.name for check in select_checks(options) if self.matches(label, check.name))
        return dataclasses.replace(options, checks=names) if names else None


def parse_keyword(text: str) -> Keyword:
    """The expression of `-k TEXT`.

    Raises:
        UsageError: it is not one, in one line that says where.
    """
    try:
        return Keyword(text, _Parser(text).expression())
    except _ParseError as exc:
        raise UsageError(
            f"-k {visible(bounded(text, 200))!r}: at column {exc.column}: {exc}; "
            "give words joined with and, or, not and parentheses"
        ) from None
