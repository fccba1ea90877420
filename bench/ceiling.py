"""The ceiling: the contract request's response bytes, served with no work at all."""

import os
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

RESPONSE = Path(os.environ["BENCH_RESPONSE_FILE"]).read_bytes()


async def graphql(request: Request) -> Response:
    await request.body()
    return Response(RESPONSE, media_type="application/json")


async def healthz(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok"})


app = Starlette(
    routes=[Route("/graphql", graphql, methods=["GET", "POST"]), Route("/healthz", healthz)]
)
