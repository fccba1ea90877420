"""Parsing and validation under the document limits, with a memory bounded by its bytes.

A text seen before is not parsed again, nor validated again under the same rules. The limits
(request_limits.document) run as validation rules beside the spec's and any rule another
extension adds, so this extension runs after every other (see `schema.AlmanacSchema`).
A refusal is remembered by its errors, and raised fresh each time: a remembered exception
raised again would keep every request's frames in its traceback.
"""

from collections.abc import Iterator

from graphql import (
    DocumentNode,
    GraphQLError,
    GraphQLSyntaxError,
    NoFragmentCyclesRule,
    parse,
)
from graphql.language.parser import MAX_NESTING_DEPTH
from graphql.validation.validate import ValidationAbortedError
from strawberry.extensions import SchemaExtension

from api_errors import ApiError, ErrorCode
from request_limits import (
    DocumentLimits,
    FragmentCycles,
    limit_rules,
    nests_past,
    too_many_tokens,
)
from schema.extensions.services import KnownDocument, Services, state_of

TOO_MANY_ERRORS = "Too many validation errors"
"""How graphql-core's refusal begins when it stops at its most errors (`max_errors`)."""


class DocumentChecks(SchemaExtension):
    known: KnownDocument | None = None  # What this operation's document was found to be.

    def on_parse(self) -> Iterator[None]:
        context = state_of(self.execution_context)
        services = context.services if context is not None else None
        text = self.execution_context.query
        if context is not None and context.admitted is not None:
            # Admitted by the gate (server.graphql.admission): parsed, and its operation
            # selected, there.
            self.known = context.admitted.known
            self.execution_context.graphql_document = context.admitted.document
        elif services is not None and text is not None:  # the schema run directly
            self.known = known = known_document(services, text)
            self.execution_context.graphql_document = parsed_or_refused(known)
        yield

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        almanac = state_of(context)
        services, known = (almanac.services if almanac is not None else None), self.known
        if services is None or known is None:
            yield
            return
        rules = (
            *(
                FragmentCycles if rule is NoFragmentCyclesRule else rule
                for rule in context.validation_rules
            ),
            *limit_rules(services.document_limits),
        )
        if known.errors is not None and known.rules == rules:
            context.pre_execution_errors = known.errors
            yield
            return
        context.validation_rules = rules
        yield
        errors = context.pre_execution_errors or []
        typed = [_typed(error) for error in errors if not isinstance(error, ValidationAbortedError)]
        aborted = [error for error in errors if isinstance(error, ValidationAbortedError)]
        if aborted and (why := _why_aborted(aborted[0], typed, context.graphql_document)):
            typed.append(why)
        errors[:] = typed  # In place: Strawberry answers with this list.
        known.rules, known.errors = rules, errors
        services.documents.put(context.query or "", known)


def known_document(services: Services, text: str) -> KnownDocument:
    """What `text` was found to be, parsed within the token limit once and kept (the gate,
    server.graphql.admission, parses through here before the pipeline runs; then this finds it)."""
    known = services.documents.get(text)
    if known is None:
        known = _parsed(text, services.document_limits)
        services.documents.put(text, known)
    return known


def parsed_or_refused(known: KnownDocument) -> DocumentNode:
    """The document `known` holds, parsed; or its parser's refusal raised afresh (a copy: the
    one kept must not hold a request's traceback)."""
    if isinstance(known.parsed, GraphQLError):
        error = known.parsed
        raise GraphQLError(
            error.message,
            source=error.source,
            positions=error.positions,
            extensions=error.extensions,
        )
    return known.parsed


def _parsed(text: str, limits: DocumentLimits) -> KnownDocument:
    if (refusal := too_many_tokens(text, limits)) is not None:
        return KnownDocument(refusal.as_graphql_error())
    try:
        return KnownDocument(parse(text, max_tokens=limits.max_tokens))
    except GraphQLSyntaxError as error:
        error.extensions = {"code": ErrorCode.GRAPHQL_PARSE_FAILED}
        return KnownDocument(error)


def _code(error: GraphQLError) -> object:
    return (error.extensions or {}).get("code")


def _why_aborted(
    error: ValidationAbortedError, listed: list[GraphQLError], document: DocumentNode | None
) -> GraphQLError | None:
    """Why graphql-core stopped validating, with the code of that cause; None if a refusal
    already listed says it. graphql-core stops (1) after its 100th error, (2) when a document's
    fields take more comparisons than it makes (a flat selection of some 700 fields, say): the
    document's size, or (3) when fragments nest deeper than it recurses: its depth."""
    if error.message.startswith(TOO_MANY_ERRORS):
        return GraphQLError(
            f"Validation stopped after these {len(listed)} errors: fix them and send the "
            "document again.",
            extensions={"code": ErrorCode.GRAPHQL_VALIDATION_FAILED},
        )
    if any(_code(e) == ErrorCode.MAX_DEPTH_EXCEEDED for e in listed):
        return None  # The depth limit's own refusal says it.
    if document is not None and nests_past(document, MAX_NESTING_DEPTH):
        return GraphQLError(
            f"The document nests fragments more than {MAX_NESTING_DEPTH} levels deep, deeper "
            "than this API checks.",
            extensions={"code": ErrorCode.MAX_DEPTH_EXCEEDED},
        )
    return GraphQLError(
        "The document is too large to check: its selections hold more fields than this API "
        "compares. Send fewer fields, or split the request.",
        extensions={"code": ErrorCode.TOO_MANY_TOKENS},
    )


def _typed(error: GraphQLError) -> GraphQLError:
    """The validation error with its code."""
    if not _code(error):
        # A literal our scalars refuse (an impossible date, say) is bad input, not a bad document.
        refused_value = isinstance(error.original_error, ApiError)
        code = ErrorCode.BAD_USER_INPUT if refused_value else ErrorCode.GRAPHQL_VALIDATION_FAILED
        error.extensions = {**(error.extensions or {}), "code": code}
    return error
