"""Our mini-crossword prompts (completion style for base models). The examples come only from the
puzzles the paper holds out for few-shot use (136, 141, 146, 151 and 156, 1-based). Some of their
clues recur in test puzzles; those are paraphrased or left out, and a test checks that no clue and
no answer word of a test puzzle appears here."""

# Propose: the grid's constraints, then candidate lines "slot. WORD (confidence)".
PROPOSE_FEWSHOT = """Fill a 5x5 mini crossword. h1-h5 are the rows, v1-v5 the columns. For open clues, \
list words that fit the clue and the letters already in the grid, each with a confidence \
(certain, high, medium or low).

Clues and letters:
h1. An English sparrow: S P R U G
h2. To remit; to dispense with: W _ _ _ _
h3. A granular crystalline dyke rock: E _ _ _ _
h4. To make joyful: E _ _ _ _
h5. A small chaffy bract: P _ _ _ _
v1. To brush away; an oar: S W E E P
v2. A Roman woman's outdoor cloak: P _ _ _ _
v3. A competitor: R _ _ _ _
v4. Grape jam: U _ _ _ _
v5. A civet cat, or its fur: G _ _ _ _
Candidates:
h2. WAIVE (certain)
h4. ELATE (high)
v3. RIVAL (high)
v5. GENET (medium)
h3. ELVAN (low)

Clues and letters:
{clues}
Candidates:
"""

# Sample: exactly one candidate line.
SAMPLE_FEWSHOT = """Fill a 5x5 mini crossword. h1-h5 are the rows, v1-v5 the columns. Give one word \
that fits an open clue and the letters already in the grid.

Clues and letters:
h1. A quay, dock, pier: W H A R F
h2. Dewy; roscid: _ _ _ _ _
h3. A person with an all-consuming enthusiasm, such as for computers or anime: _ _ _ _ _
h4. A nabk: _ _ _ _ _
h5. An open space in a forest: _ _ _ _ _
v1. Incorrect; to injure: W _ _ _ _
v2. An inn: H _ _ _ _
v3. A Turkish oxcart; a howling monkey: A _ _ _ _
v4. Searched; combed: R _ _ _ _
v5. Chance; a parasitic worm; a fish: F _ _ _ _
Next: v1. WRONG

Clues and letters:
{clues}
Next:"""

# One clue, judged alone (the paper's evaluator asks this for every remaining clue).
CLUE_VALUE_FEWSHOT = """Can a common or rare English word fit the clue and the letters? Answer sure, \
maybe or impossible.

Clue: To make joyful
Letters: E L A _ E
Judgement: sure

Clue: A scent
Letters: A R O M _
Judgement: sure

Clue: A competitor
Letters: R I Q _ X
Judgement: impossible

Clue: Dewy; roscid
Letters: R O _ A _
Judgement: maybe

Clue: A horse sound
Letters: Z Z _ G H
Judgement: impossible

Clue: {clue}
Letters: {letters}
Judgement:"""

# Whole-state judgement for the generic value / likelihood evaluators.
STATE_VALUE_FEWSHOT = """Can every open clue of the mini crossword still be filled with a word that \
fits its letters? Answer sure, likely or impossible.

Open clues and letters:
h2. A competitor: R _ V _ L
v5. Wary; conscious; watchful: A _ E R T
Judgement: sure

Open clues and letters:
h3. A granular crystalline dyke rock: E Q V X N
Judgement: impossible

Open clues and letters:
{clues}
Judgement:"""

# Ranking of lexicon candidates: the model's likelihood of " WORD" after this prompt.
RANK_FEWSHOT = """Crossword answers, one per clue, fitting the letters given.

Clue: Arbor vitae
Letters: T _ _ J A
Answer: THUJA

Clue: A characteristic
Letters: _ _ _ _ _
Answer: TRAIT

Clue: To brush away; an oar
Letters: S _ E _ P
Answer: SWEEP

Clue: {clue}
Letters: {letters}
Answer:"""

VOTE_FEWSHOT = """Which partly filled mini crossword is most likely to be completed correctly?

{choices}
The best choice is"""
