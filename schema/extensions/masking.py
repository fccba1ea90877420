"""Masking: an error raised inside the server reaches the client as a bare internal error (the
schema's `process_errors` has logged it first); the client's own errors are shown as they are."""

from graphql import GraphQLError
from strawberry.extensions import MaskErrors

from api_errors import INTERNAL_ERROR_MESSAGE, ErrorCode, is_unexpected


class MaskUnexpectedErrors(MaskErrors):
    def __init__(self) -> None:
        super().__init__(should_mask_error=is_unexpected, error_message=INTERNAL_ERROR_MESSAGE)

    def anonymise_error(self, error: GraphQLError) -> GraphQLError:
        masked = super().anonymise_error(error)
        masked.extensions = {"code": ErrorCode.INTERNAL_SERVER_ERROR}
        return masked
