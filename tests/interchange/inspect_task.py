"""Writes a real Inspect log: a three-question task run on Inspect's offline `mockllm/model`
(its answers given, so that nothing is fetched), into the folder named; with `--fail`, a run
that fails (the model runs out of answers part way). Run in a process of its own, as Inspect
runs its own event loop: `python -m tests.interchange.inspect_task FOLDER [--fail]`."""

import sys

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import match


def answer(text: str) -> ModelOutput:
    output = ModelOutput.from_content(model="mockllm/model", content=text)
    # Given, so that mockllm does not count tokens (tiktoken would download its encoding).
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def main(folder: str, fail: bool) -> None:
    answers = ["4", "Paris"] if fail else ["4", "Paris", "7"]
    model = get_model("mockllm/model", custom_outputs=[answer(text) for text in answers])
    task = Task(
        dataset=[
            Sample(input="What is 2 + 2?", target="4"),
            Sample(input="What is the capital of France?", target="Paris"),
            Sample(input="What is 3 + 3?", target="6"),
        ],
        scorer=match(),
        name="arithmetic",
    )
    [log] = eval(task, model=model, log_dir=folder, display="none", max_samples=1)
    print(log.location)


if __name__ == "__main__":
    main(sys.argv[1], "--fail" in sys.argv[2:])
