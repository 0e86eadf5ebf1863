"""Our Creative Writing prompts: few-shot completion style for base models (a chat prefix for chat).

The worked example uses its own four sentences (none from the paper's inputs). Markers such as
"End of passage." give the base model a place to stop, and the generators stop on them.
"""

from __future__ import annotations

from typing import Sequence

EXAMPLE_SENTENCES = (
    "The kettle began to sing.",
    "Nobody had fed the goldfish.",
    "Maria laughed until she cried.",
    "The storm passed before dawn.",
)

EXAMPLE_PLAN = ("A rainy evening at Maria's house: she makes tea, finds the goldfish hungry, "
                "her brother makes a bad joke about it, and the night ends calmly.")

EXAMPLE_PARAGRAPHS = (
    "Maria came home soaked from the rain and filled the kettle. She sat by the window while the "
    "water warmed. The kettle began to sing.",
    "When she carried her tea to the living room, she saw the goldfish gasping at the top of its "
    "bowl. Her brother had promised to look after it. Nobody had fed the goldfish.",
    "Her brother walked in, looked at the bowl and said the fish was only on a diet. The joke was "
    "so bad that it was good. Maria laughed until she cried.",
    "They fed the fish, drank their tea and listened to the thunder roll away over the hills. "
    "The storm passed before dawn.",
)

EXAMPLE_PASSAGE = "\n\n".join(EXAMPLE_PARAGRAPHS)

BAD_PASSAGE = ("The kettle began to sing.\n\nCars are fast. Nobody had fed the goldfish.\n\n"
               "Maria laughed until she cried.\n\nThe moon is made of rock. The storm passed before dawn.")

INSTRUCTION = ("Write a coherent passage of 4 short paragraphs, separated by blank lines. "
               "Paragraph i must end with sentence i, word for word.")

PASSAGE_END = "End of passage."
# Stops shared by both steps of plan-then-passage: a plan ends where its passage begins.
PLAN_STOPS = ("\nPassage:", PASSAGE_END, "\nSentences:", "\nPlan:")
PASSAGE_STOPS = (PASSAGE_END, "\nSentences:", "\nPlan:")

CHAT_PREFIX = ("You are a careful writer. Follow the format of the example exactly; write only "
               "the requested part.\n\n")


def numbered(sentences: Sequence[str]) -> str:
    return "\n".join(f"{i}. {s}" for i, s in enumerate(sentences, 1))


def _head() -> str:
    return f"{INSTRUCTION}\n\nSentences:\n{numbered(EXAMPLE_SENTENCES)}\n"


def plan_prompt(sentences: Sequence[str]) -> str:
    """Ask for a plan; the model continues after "Plan:" and stops at "Passage:"."""
    return (f"{_head()}Plan: {EXAMPLE_PLAN}\nPassage:\n{EXAMPLE_PASSAGE}\n{PASSAGE_END}\n\n"
            f"Sentences:\n{numbered(sentences)}\nPlan:")


def passage_prompt(sentences: Sequence[str], plan: str | None = None, draft: str | None = None,
                   problem: str | None = None) -> str:
    """Ask for a passage (IO when ``plan`` is None; the second step after a plan; a rewrite with a
    draft and the problem found in it)."""
    example_plan = f"Plan: {EXAMPLE_PLAN}\n" if plan is not None else ""
    text = (f"{_head()}{example_plan}Passage:\n{EXAMPLE_PASSAGE}\n{PASSAGE_END}\n\n"
            f"Sentences:\n{numbered(sentences)}\n")
    if plan is not None:
        text += f"Plan: {plan}\n"
    if draft is not None:
        text += f"Draft:\n{draft}\n"
        if problem:
            text += f"Problem with the draft: {problem}\n"
        text += "Improved passage"
    else:
        text += "Passage"
    return text + ":\n"


def cot_prompt(sentences: Sequence[str]) -> str:
    """Chain of thought: the model writes a plan and then the passage in one go."""
    return plan_prompt(sentences)


def paragraph_prompt(sentences: Sequence[str], done: Sequence[str], plan: str | None = None) -> str:
    """Paragraph-by-paragraph: one paragraph per line; ask for paragraph len(done)+1 (after the
    plan, when one is given; the example then shows its plan too)."""
    lines = [f"{INSTRUCTION} One paragraph per line.", "", "Sentences:", numbered(EXAMPLE_SENTENCES)]
    if plan is not None:
        lines.append(f"Plan: {EXAMPLE_PLAN}")
    for i, (s, p) in enumerate(zip(EXAMPLE_SENTENCES, EXAMPLE_PARAGRAPHS, strict=True), 1):
        lines.append(f'Paragraph {i} (ends with "{s}"): {p}')
    lines += ["", "Sentences:", numbered(sentences)]
    if plan is not None:
        lines.append(f"Plan: {plan}")
    for i, p in enumerate(done, 1):
        lines.append(f'Paragraph {i} (ends with "{sentences[i - 1]}"): {p}')
    k = len(done) + 1
    lines.append(f'Paragraph {k} (ends with "{sentences[k - 1]}"):')
    return "\n".join(lines)


VOTE_INTRO = ("Several choices are given for the next step of a coherent four-paragraph story. "
              "Pick the most coherent one.")

VOTE_EXAMPLE = """Story so far: (nothing yet)
Choice 1: A cat, then a moon landing, then a recipe, then a football match, with no link between them.
Choice 2: A rainy evening at home: tea, a hungry goldfish, a bad joke, and the storm ends.
Answer: The best choice is 2"""


def vote_prompt(so_far: str, choices: Sequence[str]) -> str:
    body = "\n".join(f"Choice {k}: {c}" for k, c in enumerate(choices, 1))
    return f"{VOTE_INTRO}\n\n{VOTE_EXAMPLE}\n\nStory so far: {so_far or '(nothing yet)'}\n{body}\nAnswer:"


VALUE_PROMPT = """Can this start grow into a coherent four-paragraph story? Answer sure, likely or impossible.

Story so far: Maria came home soaked from the rain and filled the kettle. The kettle began to sing.
Judgement: sure

Story so far: Cars are fast. The moon is rock. The kettle began to sing.
Judgement: impossible

Story so far: {so_far}
Judgement:"""


SCORE_PROMPT = """Rate the coherence of each passage from 1 (unrelated sentences) to 10 (one smooth, connected story).

Passage:
{good}
Coherence score: 9

Passage:
{bad}
Coherence score: 2

Passage:
{passage}
Coherence score:"""


def score_prompt(passage: str) -> str:
    return SCORE_PROMPT.format(good=EXAMPLE_PASSAGE, bad=BAD_PASSAGE, passage=passage.strip())
