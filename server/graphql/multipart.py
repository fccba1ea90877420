"""The GraphQL multipart request spec (jaydenseric/graphql-multipart-request-spec): an
`operations` field (the request as JSON), a `map` field (each file's field to the variables it
stands for) and the files. Each file is read whole (the request body limit bounds it) and put
where the map says as the schema's `UploadedFile` (a string naming the file and its SHA-256, with
its name and bytes beside)."""

from collections.abc import Callable
from typing import Any

import orjson
from cross_web import AsyncHTTPRequestAdapter
from starlette.datastructures import UploadFile
from strawberry.file_uploads.utils import replace_placeholders_with_files

from api_errors import ApiError
from schema import UploadedFile

MULTIPART = "multipart/form-data"


async def multipart_fields(
    request: AsyncHTTPRequestAdapter, shallow: Callable[[Any, str], Any]
) -> dict[str, Any]:
    """The request's fields (query, variables, ...) with each file in place; `operations`
    refused by `shallow` as a JSON body would be if it nests too deep (before it is copied)."""
    try:
        form = await request.get_form_data()
    except ValueError as error:  # Starlette's parser refuses a malformed body so
        raise ApiError(f"The multipart body cannot be read: {error}.", status=400) from error
    operations = shallow(_json(form.form.get("operations"), "operations"), "`operations`")
    files_map = _json(form.form.get("map"), "map")
    if not isinstance(operations, dict) or not isinstance(files_map, dict):
        raise ApiError("`operations` and `map` must be JSON objects.", status=400)
    if not all(_paths(paths) for paths in files_map.values()):
        raise ApiError(
            "The `map` must give each file a list of paths (strings like `variables.file`).",
            status=400,
        )
    files = {}
    for field, upload in form.files.items():
        if isinstance(upload, UploadFile):
            files[field] = UploadedFile(upload.filename or field, await upload.read())
    try:
        return replace_placeholders_with_files(operations, files_map, files)
    except (KeyError, IndexError, TypeError, ValueError) as error:
        raise ApiError(
            f"The `map` names a file or variable not sent: {error}.", status=400
        ) from error


def _paths(paths: Any) -> bool:
    return isinstance(paths, list) and all(isinstance(path, str) for path in paths)


def _json(value: Any, name: str) -> Any:
    if not isinstance(value, str | bytes):
        raise ApiError(f"A multipart request needs its `{name}` field.", status=400)
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError as error:
        raise ApiError(f"`{name}` is not valid JSON: {error}.", status=400) from error
