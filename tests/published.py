"""The published results, as the Code Interpreter Benchmark's published leaderboards print them.

Tests compute what each page must show from these tables, independently of the code.
"""

TRACKS = ["Math", "Visualization-Hard", "Visualization-Easy", "General"]

# Model (as the source prints it): Math, Visualization-Hard, Visualization-Easy, General.
TRACK_RESULTS = {
    "GPT-4": (82.8, 66.7, 60.8, 82.8),
    "GPT-3.5": (47.3, 33.3, 55.7, 74.1),
    "LLaMA2-13B-Chat": (8.3, 1.2, 15.2, 48.3),
    "CodeLLaMA-13B-Instruct": (28.2, 15.5, 21.5, 74.1),
    "InternLM-20B-Chat": (34.6, 10.7, 24.1, 65.5),
    "ChatGLM3-6B": (54.2, 4.8, 15.2, 62.1),
    "Qwen-1.8B-Chat": (25.6, 21.4, 22.8, 65.5),
    "Qwen-7B-Chat": (41.9, 23.8, 38.0, 67.2),
    "Qwen-14B-Chat": (58.4, 31.0, 45.6, 65.5),
    "Qwen-72B-Chat": (72.7, 41.7, 43.0, 82.8),
}

# The parent record's lab-reported combined scores: code executability over all tracks.
COMBINED_RESULTS = {
    "GPT-4": 86.8,
    "GPT-3.5": 72.9,
    "LLaMA2-7B-Chat": 33.6,
    "LLaMA2-13B-Chat": 44.4,
    "CodeLLaMA-7B-Instruct": 65.1,
    "CodeLLaMA-13B-Instruct": 68.8,
    "InternLM-7B-Chat-v1.1": 56.3,
    "InternLM-20B-Chat": 54.9,
    "Qwen-1.8B-Chat": 26.8,
    "Qwen-7B-Chat": 70.2,
    "Qwen-14B-Chat": 81.7,
}

# How the almanac names a source's model: its model list (tracked), and the GPT-4 note.
TRACKED_AS = {"Qwen-14B-Chat": "Qwen-14B", "ChatGLM3-6B": "ChatGLM3-6B"}
ALMANAC_NAME = {**TRACKED_AS, "GPT-4": "GPT-4 (snapshot unspecified)"}
RELEASED = {"Qwen-14B": "2023-09", "ChatGLM3-6B": "2023-10"}
CAPABILITY_RANK = {"Qwen-14B": 213}


def expected_board(scores: dict[str, float]) -> list[tuple[str, float, bool]]:
    """(almanac name, score, tracked) per model, best score first, ties by name A to Z."""
    named = [
        (ALMANAC_NAME.get(source_name, source_name), score, source_name in TRACKED_AS)
        for source_name, score in scores.items()
    ]
    return sorted(named, key=lambda row: (-row[1], row[0].casefold()))


def track_scores(track: str) -> dict[str, float]:
    column = TRACKS.index(track)
    return {model: scores[column] for model, scores in TRACK_RESULTS.items()}
