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
    log_level: str = Field(default="info", description="Log level of the server.")
