"""A SYNTHETIC almanac for load, scale and cost tests: made-up benchmarks, models and scores.

Nothing here is a real result. Every name says "Synthetic", and the dataset's provenance says
so too. Its shape follows a large almanac: categories of 50 benchmarks and one of 150, about
100 leaderboard rows and 3 reads per benchmark, and 300 tracked models, one of which
("Synthetic Model 0") is listed on every leaderboard.

    .venv/bin/python bench/synthetic.py 3000 > synthetic.json   # for `almanac import`
"""

import json
import random
import sys
from typing import Any

FORMAT = "benchmark-almanac/1"
PROVENANCE = "SYNTHETIC data made by bench/synthetic.py for load tests: no result is real."
CATEGORY_SIZE = 50
BIG_CATEGORY_SIZE = 150
TRACKED_MODELS = 300
UNTRACKED_MODELS = 300
EVERYWHERE = "Synthetic Model 0"


def synthetic_almanac(
    benchmarks: int, rows: int = 100, reads: int = 3, seed: int = 1
) -> dict[str, Any]:
    """The dataset in the import format, the same for the same arguments."""
    chance = random.Random(seed)
    categories = _categories(benchmarks)
    models = [
        {
            "slug": f"synthetic-model-{i}",
            "name": f"Synthetic Model {i}",
            "aliases": [f"Synthetic Model {i} (chat)"],
            "lab": "synthetic-lab",
            "released_on": f"20{20 + i % 6}-{1 + i % 12:02d}",
            "capability_index_rank": i + 1,
        }
        for i in range(TRACKED_MODELS)
    ]
    names = [f"Synthetic Model {i}" for i in range(TRACKED_MODELS)]
    names += [f"Untracked Model {i}" for i in range(UNTRACKED_MODELS)]
    return {
        "format": FORMAT,
        "provenance": [PROVENANCE],
        "labs": [{"slug": "synthetic-lab", "name": "Synthetic Lab"}],
        "categories": [
            {"slug": slug, "name": slug.replace("-", " ").title()} for slug in categories
        ],
        "models": models,
        "benchmarks": [
            _benchmark(i, category, names, rows, reads, chance)
            for i, category in enumerate(_members(benchmarks, categories))
        ],
    }


def _categories(benchmarks: int) -> list[str]:
    rest = max(0, benchmarks - BIG_CATEGORY_SIZE)
    return ["synthetic-big"] + [
        f"synthetic-{i}" for i in range((rest + CATEGORY_SIZE - 1) // CATEGORY_SIZE)
    ]


def _members(benchmarks: int, categories: list[str]) -> list[str]:
    """Each benchmark's category: the first 150 in the big one, then 50 to a category."""
    return [
        categories[0] if i < BIG_CATEGORY_SIZE else categories[1 + (i - BIG_CATEGORY_SIZE) // 50]
        for i in range(benchmarks)
    ]


def _benchmark(
    index: int, category: str, names: list[str], rows: int, reads: int, chance: random.Random
) -> dict[str, Any]:
    listed = [EVERYWHERE, *chance.sample(names[1:], min(rows, len(names)) - 1)]
    scores = {name: round(chance.uniform(10, 90), 1) for name in listed}
    history = []
    for read in range(reads):
        for name in chance.sample(listed, max(1, len(listed) // 10)):
            scores[name] = round(min(100.0, scores[name] + chance.uniform(0, 5)), 1)
        history.append(
            {
                "read_on": f"2025-{1 + read:02d}-15",
                "entries": [
                    {
                        "model_name": name,
                        "setting": None,
                        "score": score,
                        "source": "Synthetic",
                        "published_on": f"2025-{1 + read:02d}-01",
                        "note": None,
                    }
                    for name, score in scores.items()
                ],
            }
        )
    return {
        "slug": f"synthetic-benchmark-{index}",
        "name": f"Synthetic Benchmark {index}",
        "description": "A made-up benchmark for load tests.",
        "metric": {"name": "Accuracy", "unit": "PERCENT", "higher_is_better": True},
        "category": category,
        "made_by": "synthetic-lab",
        "prominence": index % 7,
        "status": "IN_USE" if index % 5 else "SATURATED",
        "reads": history,
    }


if __name__ == "__main__":
    json.dump(synthetic_almanac(int(sys.argv[1]) if len(sys.argv) > 1 else 1000), sys.stdout)
