"""Limits on a GraphQL document, checked before anything runs, each refused with its own code.

Tokens are counted before the document is parsed (`too_many_tokens`). Fragment cycles, depth and
aliases are graphql-core validation rules (`limit_rules`), run with the spec's own rules. Depth
and aliases are measured by walks that visit each fragment once: fragments spreading fragments
twice over must not make a check exponential.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from graphql import (
    BREAK,
    ASTValidationRule,
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSyntaxError,
    InlineFragmentNode,
    Lexer,
    NoFragmentCyclesRule,
    OperationDefinitionNode,
    SelectionSetNode,
    Source,
    Token,
    TokenKind,
    ValidationRule,
)

from api_errors import ApiError, ErrorCode


@dataclass(frozen=True)
class DocumentLimits:
    max_tokens: int
    max_depth: int
    max_aliases: int


def selected_operation(
    document: DocumentNode, operation_name: str | None
) -> OperationDefinitionNode:
    """The operation a request runs, by the spec's GetOperation: the one named, or the only one.

    Pricing and execution both go by this rule (execution is handed the same name), so the
    operation priced is the one that runs. A document with several operations and no name, or
    without the one named, is refused before anything runs (`BAD_REQUEST`).
    """
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if operation_name is None:
        if len(operations) == 1:
            return operations[0]
        message = (
            "The document holds no operation."
            if not operations
            else f"The document holds {len(operations)} operations: name the one to run in "
            "`operationName`."
        )
        raise ApiError(message, code=ErrorCode.BAD_REQUEST)
    for operation in operations:
        if operation.name is not None and operation.name.value == operation_name:
            return operation
    raise ApiError(
        f"The document holds no operation named {operation_name!r}.", code=ErrorCode.BAD_REQUEST
    )


def too_many_tokens(text: str, limits: DocumentLimits) -> ApiError | None:
    """The refusal of a document too long to parse, if it is."""
    if token_count(text, stop_after=limits.max_tokens) <= limits.max_tokens:
        return None
    return ApiError(
        f"The document has more than {limits.max_tokens} tokens, the most this API parses.",
        code=ErrorCode.TOO_MANY_TOKENS,
    )


class FragmentCycles(NoFragmentCyclesRule):
    """The spec's rule against fragment cycles, its refusals with their own code."""

    def report_error(self, error: GraphQLError) -> None:
        error.extensions = {**(error.extensions or {}), "code": ErrorCode.FRAGMENT_CYCLE}
        super().report_error(error)


@cache
def limit_rules(limits: DocumentLimits) -> tuple[type[ASTValidationRule], ...]:
    """Validation rules for the depth and alias limits (one pair of classes per limits)."""

    class MaxDepth(ValidationRule):
        def enter_document(self, node: DocumentNode, *_: Any) -> Any:
            try:
                depth = max_depth(node)
            except RecursionError:  # Fragments nested deeper than Python recurses.
                depth = limits.max_depth + 1
            if depth > limits.max_depth:
                self.report_error(
                    GraphQLError(
                        f"The document nests fields {depth} deep; the most allowed is "
                        f"{limits.max_depth}.",
                        extensions={"code": ErrorCode.MAX_DEPTH_EXCEEDED},
                    )
                )
            return BREAK

    class MaxAliases(ValidationRule):
        def enter_document(self, node: DocumentNode, *_: Any) -> Any:
            if (aliases := alias_count(node)) > limits.max_aliases:
                self.report_error(
                    GraphQLError(
                        f"The document has {aliases} aliases; the most allowed is "
                        f"{limits.max_aliases}.",
                        extensions={"code": ErrorCode.TOO_MANY_ALIASES},
                    )
                )
            return BREAK

    return (MaxDepth, MaxAliases)


def token_count(text: str, stop_after: int) -> int:
    """How many lexical tokens `text` holds, counting no further than one past `stop_after`."""
    lexer = Lexer(Source(text))
    count = 0
    try:
        while lexer.advance().kind is not TokenKind.EOF and count <= stop_after:
            count += 1
    except GraphQLSyntaxError:
        pass  # The parser reports it, with its position.
    return count


def max_depth(document: DocumentNode) -> int:
    """How deep fields nest in the document's deepest operation, through its fragments (a
    fragment that spreads itself counts as empty inside itself: the cycle is refused anyway)."""
    walk = _DepthWalk(_fragments(document))
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    return max((walk.depth(op.selection_set) for op in operations), default=0)


def nests_past(document: DocumentNode, levels: int) -> bool:
    """Whether fields nest more than `levels` deep, or deeper than Python recurses."""
    try:
        return max_depth(document) > levels
    except RecursionError:
        return True


def alias_count(document: DocumentNode) -> int:
    """How many aliased fields the document spells out."""
    return sum(
        1
        for definition in document.definitions
        if isinstance(definition, OperationDefinitionNode | FragmentDefinitionNode)
        for field in _fields_written(definition.selection_set)
        if field.alias is not None
    )


class _DepthWalk:
    def __init__(self, fragments: dict[str, FragmentDefinitionNode]) -> None:
        self.fragments = fragments
        # Each fragment's depth is measured once: fragments spreading fragments twice over
        # must not make the measure exponential.
        self.fragment_depths: dict[str, int] = {}

    def depth(self, selection_set: SelectionSetNode | None) -> int:
        if selection_set is None:
            return 0
        deepest = 0
        for selection in selection_set.selections:
            if isinstance(selection, FieldNode):
                deepest = max(deepest, 1 + self.depth(selection.selection_set))
            elif isinstance(selection, InlineFragmentNode):
                deepest = max(deepest, self.depth(selection.selection_set))
            elif isinstance(selection, FragmentSpreadNode):
                deepest = max(deepest, self.fragment_depth(selection.name.value))
        return deepest

    def fragment_depth(self, name: str) -> int:
        if name not in self.fragment_depths:
            self.fragment_depths[name] = 0  # While it is measured: a cycle ends here.
            fragment = self.fragments.get(name)
            self.fragment_depths[name] = self.depth(fragment.selection_set) if fragment else 0
        return self.fragment_depths[name]


def _fields_written(selection_set: SelectionSetNode | None) -> Iterator[FieldNode]:
    """Every field spelled out in the selection set, inline fragments included."""
    if selection_set is None:
        return
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            yield selection
            yield from _fields_written(selection.selection_set)
        elif isinstance(selection, InlineFragmentNode):
            yield from _fields_written(selection.selection_set)


def _fragments(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}


# A parsed document holds its text (the cache key, counted there) and some 450 bytes a token
# (measured with tracemalloc on the site's page query and on small ones).
BYTES_PER_TOKEN = 600
DOCUMENT_BYTES = 1_000


def held_bytes(outcome: DocumentNode | list[GraphQLError]) -> int:
    """About how much memory a parsed document, or the errors refusing one, hold."""
    if isinstance(outcome, list):
        return sum(DOCUMENT_BYTES + 2 * len(error.message) for error in outcome)
    return DOCUMENT_BYTES + BYTES_PER_TOKEN * _token_total(outcome)


def _token_total(document: DocumentNode) -> int:
    """How many tokens the parsed document holds (its location chain, start to end)."""
    location = document.loc
    if location is None:
        return 0
    count = 0
    token: Token | None = location.start_token
    while token is not None:
        count += 1
        token = token.next
    return count
