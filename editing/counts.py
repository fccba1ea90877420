"""A count and its noun, singular for one: "1 category", "2 categories"."""

# The nouns an import's summary counts, by section: (one, many).
SECTION_NOUNS = {
    "labs": ("lab", "labs"),
    "categories": ("category", "categories"),
    "models": ("model", "models"),
    "benchmarks": ("benchmark", "benchmarks"),
    "site": ("site record", "site records"),
}


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """`1 benchmark`, `2 benchmarks`; `plural` when it is not the singular with an "s"."""
    noun = singular if count == 1 else (plural or f"{singular}s")
    return f"{count} {noun}"


def counted_items(count: int, section: str) -> str:
    """So many items of an import's `section` ("labs", "categories", ...)."""
    return counted(count, *SECTION_NOUNS.get(section, (section, section)))
