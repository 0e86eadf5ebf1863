"""Prompt text of the planning task: LLM+P's problem-writing prompt (with and without the one
example), the direct-plan baseline, and the step prompts of Tree of Thoughts over actions."""

# LLM+P (Liu et al. 2023): the domain in PDDL, one example problem in English and in PDDL, then the
# new problem in English; the model writes the problem PDDL.
LLMP = """{domain_nl}

Here is the PDDL domain file:
{domain_pddl}

{example}Now I have a new planning problem and its description is:
{problem_nl}

Provide me with the problem PDDL file that describes the new planning problem directly without further
explanations. Only return the PDDL file. Do not return anything else.
"""

LLMP_EXAMPLE = """An example planning problem is:
{example_nl}
The problem PDDL file to this problem is:
{example_pddl}

"""

REPAIR = """The problem PDDL you wrote was refused:
{reasons}
Write the corrected problem PDDL file only.
"""

# The direct baseline (LLM-as-planner): the plan written at once, one action per line.
DIRECT = """{domain_nl}

The actions, in PDDL:
{actions}

{example}Now I have a new planning problem and its description is:
{problem_nl}

Write a plan that solves it: one action per line, in the form (action argument ...), and nothing else.
Plan:
"""

DIRECT_EXAMPLE = """An example planning problem is:
{example_nl}
A plan for this problem is:
{example_plan}

"""

STATE = """Actions (name and parameters): {actions}
Current facts: {facts}
Goal: {goal}
Plan so far: {plan}
"""

PROPOSE = """{state}Possible next actions, one per line, in the form (action argument ...):
"""

VALUE = """{state}Can the goal still be reached from the current facts (sure/likely/impossible)?
Answer:"""

# Short zero-shot prompts (TrainingPrompts): ``tot export planning`` data and the adapters trained on
# it. Every true fact of the state (none left out: a cut list would not be the state), the goal, and
# after "Next action:" one action in the form (action argument ...) on its own line.
TRAIN_VALUE = "Domain: {domain}\nFacts: {facts}\nGoal: {goal}\nCan the goal still be reached? Answer:"
TRAIN_STEP = "Domain: {domain}\nFacts: {facts}\nGoal: {goal}\nNext action:\n"

VOTE = """Goal: {goal}
Which of these plans-so-far is closest to reaching the goal?
{choices}
The best choice is"""
