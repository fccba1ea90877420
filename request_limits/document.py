"""Checking a GraphQL document before anything runs: size, shape, then the spec's validation.

The checks run cheapest first, and each refusal has its own code, so a client knows which limit
it hit: too many tokens (before parsing finishes), a fragment cycle, too deep, too many
aliases, then the GraphQL spec's own validation rules.
"""

from collections.abc import Iterator
from dataclasses import dataclass

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    GraphQLSyntaxError,
    InlineFragmentNode,
    Lexer,
    NoFragmentCyclesRule,
    OperationDefinitionNode,
    SelectionSetNode,
    Source,
    Token,
    TokenKind,
    parse,
    specified_rules,
    validate,
)
from graphql.validation.validate import ValidationAbortedError

from request_limits.bounded_cache import BoundedCache
from schema.errors import (
    BAD_USER_INPUT,
    FRAGMENT_CYCLE,
    GRAPHQL_PARSE_FAILED,
    GRAPHQL_VALIDATION_FAILED,
    MAX_DEPTH_EXCEEDED,
    TOO_MANY_ALIASES,
    TOO_MANY_TOKENS,
    ClientError,
)


@dataclass(frozen=True)
class DocumentLimits:
    max_tokens: int
    max_depth: int
    max_aliases: int


class DocumentRefused(Exception):
    """The document may not run; `errors` say why, each with its code."""

    def __init__(self, errors: list[GraphQLError]) -> None:
        super().__init__(errors[0].message)
        self.errors = errors


def checked_document(schema: GraphQLSchema, text: str, limits: DocumentLimits) -> DocumentNode:
    """The parsed document, if it is within the limits and valid; else `DocumentRefused`."""
    tokens = token_count(text, stop_after=limits.max_tokens)
    if tokens > limits.max_tokens:
        raise _refused(
            TOO_MANY_TOKENS,
            f"The document has more than {limits.max_tokens} tokens, the most this API parses.",
        )
    try:
        document = parse(text, max_tokens=limits.max_tokens)
    except GraphQLSyntaxError as error:
        raise DocumentRefused([_with_code(error, GRAPHQL_PARSE_FAILED)]) from error

    if cycles := validate(schema, document, [NoFragmentCyclesRule]):
        raise DocumentRefused([_cycle_error(error, limits.max_depth) for error in cycles])
    if (depth := max_depth(document)) > limits.max_depth:
        raise _refused(
            MAX_DEPTH_EXCEEDED,
            f"The document nests fields {depth} deep; the most allowed is {limits.max_depth}.",
        )
    if (aliases := alias_count(document)) > limits.max_aliases:
        raise _refused(
            TOO_MANY_ALIASES,
            f"The document has {aliases} aliases; the most allowed is {limits.max_aliases}.",
        )
    if errors := validate(schema, document, specified_rules, max_errors=20):
        raise DocumentRefused([_validation_error(error) for error in errors])
    return document


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
    """How deep fields nest in the document's deepest operation, through its fragments.

    Call only on a document without fragment cycles.
    """
    walk = _DepthWalk(_fragments(document))
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    return max((walk.depth(op.selection_set) for op in operations), default=0)


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


def _refused(code: str, message: str) -> DocumentRefused:
    return DocumentRefused([GraphQLError(message, extensions={"code": code})])


def _with_code(error: GraphQLError, code: str) -> GraphQLError:
    error.extensions = {**(error.extensions or {}), "code": code}
    return error


def _cycle_error(error: GraphQLError, max_depth: int) -> GraphQLError:
    # graphql-core gives up on fragments nested deeper than it can follow (some 200 levels).
    if isinstance(error, ValidationAbortedError):
        return GraphQLError(
            f"The document nests fragments too deeply; the most allowed is {max_depth} levels.",
            extensions={"code": MAX_DEPTH_EXCEEDED},
        )
    return _with_code(error, FRAGMENT_CYCLE)


def _validation_error(error: GraphQLError) -> GraphQLError:
    # A literal our scalars refuse (an impossible date, say) is bad input, not a bad document.
    refused_value = isinstance(error.original_error, ClientError)
    return _with_code(error, BAD_USER_INPUT if refused_value else GRAPHQL_VALIDATION_FAILED)


class DocumentChecker:
    """`checked_document` with a memory: a document seen before is not parsed again.

    A refusal is remembered by its errors, and a new `DocumentRefused` is raised each time: a
    remembered exception raised again would keep every request's frames in its traceback.
    """

    def __init__(self, schema: GraphQLSchema, limits: DocumentLimits, max_bytes: int) -> None:
        self.schema = schema
        self.limits = limits
        self.seen: BoundedCache[str, DocumentNode | list[GraphQLError]] = BoundedCache(
            max_bytes, _outcome_size
        )

    def check(self, text: str) -> DocumentNode:
        outcome = self.seen.get(text)
        if outcome is None:
            try:
                outcome = checked_document(self.schema, text, self.limits)
            except DocumentRefused as refused:
                outcome = refused.errors
            self.seen.put(text, outcome)
        if isinstance(outcome, list):
            raise DocumentRefused(outcome)
        return outcome


# A parsed document holds its text (the cache key, counted there) and some 450 bytes a token
# (measured with tracemalloc on the site's page query and on small ones).
BYTES_PER_TOKEN = 600
DOCUMENT_BYTES = 1_000


def _outcome_size(outcome: DocumentNode | list[GraphQLError]) -> int:
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
