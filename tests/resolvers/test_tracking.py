"""Rule 1: an entry is tracked when its name or an alias matches a model on the list."""

from resolvers.tracking import index_by_key, model_key, model_keys, tracked_model
from store.documents import DateTime, ModelDoc


def model(name: str, *aliases: str) -> ModelDoc:
    return {
        "slug": name.lower(),
        "name": name,
        "aliases": list(aliases),
        "lab": None,
        "released_on": None,
        "capability_index_rank": None,
        "revision": 1,
        "updated_by": "test",
        "updated_at": DateTime("2026-11-12T00:00:00Z"),
    }


QWEN = model("Qwen-14B", "Qwen-14B-Chat", "qwen-14b")
TRACKED = index_by_key([QWEN, model("ChatGLM3-6B")])


def test_name_and_aliases_match_ignoring_case_and_surrounding_spaces() -> None:
    for spelling in ("Qwen-14B", "qwen-14b-chat", "  QWEN-14B-CHAT ", "Qwen-14B-Chat\t"):
        assert tracked_model(spelling, TRACKED) is QWEN


def test_other_names_are_not_tracked() -> None:
    for spelling in ("Qwen-14B-Chat-Int4", "Qwen 14B", "Qwen-72B-Chat", ""):
        assert tracked_model(spelling, TRACKED) is None


def test_keys_do_not_repeat() -> None:
    assert model_keys(QWEN) == ["qwen-14b", "qwen-14b-chat"]
    assert model_key("  Kimi K3 ") == "kimi k3"
