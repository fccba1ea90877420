"""All configuration, read once from the environment (prefix ALMANAC_) and passed down."""

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

GRAPHIQL_PACKAGES = Path(__file__).parent / "graphiql" / "node_modules"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ALMANAC_", frozen=True)

    mongodb_uri: str | None = Field(
        default=None,
        description="MongoDB connection string; unset means the embedded in-process store.",
    )
    mongodb_database: str = Field(default="almanac", description="MongoDB database name.")
    max_body_bytes: int = Field(
        default=100_000, gt=0, description="Largest request body accepted, in bytes."
    )
    graphiql_packages: Path = Field(
        default=GRAPHIQL_PACKAGES,
        description="node_modules folder holding the graphiql, react and react-dom packages.",
    )
    response_cache_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=0,
        description=(
            "Memory for reusing answers to repeated queries until the data changes; 0 turns "
            "it off. On MongoDB it needs a replica set (change streams) to know of changes."
        ),
    )
    log_level: str = Field(default="info", description="Log level of the server.")
