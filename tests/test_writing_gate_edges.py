"""The writing gate's edge cases: strict by default, each failure says what changed, and each
relaxation (``quotes``, ``nfkc``) lets through exactly what it names.

``reference_ending`` below is a separately written strict check (regex whitespace, plain string
comparison), sharing no code with verifiers/writing.py; the tests compare the gate with it.
"""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.writing import check_passage, ending_problem, parse_relax

REQUIRED = "Unfortunately, The man left \u201cthe house\u201d at once."


def reference_ending(sentence: str, paragraph: str, quotes: bool = False, nfkc: bool = False) -> bool:
    def prep(t: str) -> str:
        if nfkc:
            t = unicodedata.normalize("NFKC", t)
        if quotes:
            for a, b in (("\u201c", '"'), ("\u201d", '"'), ("\u2018", "'"), ("\u2019", "'")):
                t = t.replace(a, b)
        return re.sub(r"[ \t\n\r\f\v]+", " ", t).strip(" ")

    want, got = prep(sentence), prep(paragraph)
    if want[-1] not in ".!?\u2026\"')]\u2019\u201d\u00bb":
        got = got.rstrip(".!?\u2026")
    return got == want or got.endswith(" " + want) or any(got.endswith(q + want) for q in "\"'(\u2018\u201c\u00ab")


def para(ending: str) -> str:
    return "It was a long day. " + ending


# (the paragraph's ending, what the reason must say)
EDGES = [
    ("unfortunately, The man left \u201cthe house\u201d at once.", "letter case differs at character 1"),
    ("Unfortunately, the man left \u201cthe house\u201d at once.", "letter case differs at character 16"),
    ("Unfortunately, The man left \"the house\" at once.", "a quote mark differs at character 29"),
    ("Unfortunately, The man left \u201cthe house\u201d at once", "the final '.' is missing"),
    ("Unfortunately, The man left \u201cthe house\u201d at once!",
     "the final mark differs ('!' written, '.' required)"),
    ("Unfortunately, The man left \u201cthe house\u201d.", "'at once' (from character 41) is missing"),
    ("Unfortunately, The man quickly left \u201cthe house\u201d at once.",
     "'quickly' is added before character 24 ('left')"),
    ("Unfortunately, The woman left \u201cthe house\u201d at once.", "'man' (from character 20) is written as 'woman'"),
    ("Unfortunately, The man left \u201cthe house\u201d at once. Then it rained.",
     "the paragraph goes on after it (' Then it rained.')"),
    ("Unfortunately,\u00a0The man left \u201cthe house\u201d at once.", "same after nfkc (--normalise nfkc"),
    ("\uff35nfortunately, The man left \u201cthe house\u201d at once.", "same after nfkc"),
    ("Something else entirely happened in the garden today.", "not at the end of the paragraph"),
]


@pytest.mark.parametrize("ending, says", EDGES)
def test_each_rewrite_fails_and_says_what_changed(ending, says):
    why = ending_problem(REQUIRED, para(ending))
    assert not reference_ending(REQUIRED, para(ending))
    assert why is not None and says in why, why
    assert f'the required sentence is "{REQUIRED}"' in why
    assert "\n" not in why


def test_the_reason_names_the_paragraph_and_shows_both_endings():
    sentences = ("It rained.", REQUIRED, "We hid.", "The end came.")
    passage = "\n\n".join(["So. It rained.", para(EDGES[1][0]), "We hid.", "The end came."])
    problem = check_passage(sentences, passage)
    assert problem is not None and problem.paragraph == 2
    assert problem.reason.startswith('paragraph 2 must end with sentence 2: it ends with "')
    assert "letter case differs at character 16 ('t' written, 'T' required)" in problem.reason


def test_layout_is_not_a_rewrite():
    wrapped = "It was a long day.\nUnfortunately, The man\tleft \u201cthe house\u201d  at\r\nonce."
    assert ending_problem(REQUIRED, wrapped) is None
    assert reference_ending(REQUIRED, wrapped)


def test_relaxations_accept_exactly_what_they_name():
    straight = para("Unfortunately, The man left \"the house\" at once.")
    wide = para("\uff35nfortunately, The man left \u201cthe house\u201d at once.")
    assert ending_problem(REQUIRED, straight) is not None
    assert ending_problem(REQUIRED, straight, parse_relax("quotes")) is None
    assert ending_problem(REQUIRED, straight, parse_relax("nfkc")) is not None  # NFKC keeps curly quotes
    assert ending_problem(REQUIRED, wide, parse_relax("quotes")) is not None
    assert ending_problem(REQUIRED, wide, parse_relax("nfkc")) is None
    both = para("\uff35nfortunately, The man left \"the house\" at once.")
    assert ending_problem(REQUIRED, both, parse_relax("quotes,nfkc")) is None
    # no relaxation touches case, words or end marks
    for ending, _ in EDGES[:2] + EDGES[3:9]:
        assert ending_problem(REQUIRED, para(ending), parse_relax("quotes,nfkc")) is not None


def test_parse_relax():
    assert parse_relax(None) == parse_relax("none") == frozenset()
    assert parse_relax("nfkc, quotes") == {"quotes", "nfkc"}
    with pytest.raises(ValueError, match="unknown normalisation 'case'"):
        parse_relax("case")


_ALPHABET = "abcAB ,.!?\"'\u201c\u201d\u2019\uff41\u00a0\t\n"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_ALPHABET, min_size=1, max_size=30), st.text(alphabet=_ALPHABET, max_size=40),
       st.booleans(), st.booleans())
def test_gate_agrees_with_the_reference(sentence, paragraph, quotes, nfkc):
    if not sentence.strip() or not paragraph.strip():
        return
    relax = frozenset(n for n, on in (("quotes", quotes), ("nfkc", nfkc)) if on)
    sentence = " ".join(sentence.split())
    assert (ending_problem(sentence, paragraph, relax) is None) == reference_ending(sentence, paragraph, quotes, nfkc)


@pytest.mark.parametrize("extra, code", [([], 1), (["--normalise", "quotes"], 0), (["--normalise", "case"], 2)])
def test_verify_cli_strict_by_default(tmp_path, extra, code):
    f = tmp_path / "p.txt"
    f.write_text("Hi. It rained.\n\nSo. He said \"no\".\n\nWe hid.\n\nThe end came.\n", encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "solver.tools.cli", "verify", "writing",
                          "It rained. He said \u201cno\u201d. We hid. The end came.", str(f), *extra],
                         capture_output=True, text=True)
    assert out.returncode == code, out.stderr
    if code == 1:
        assert "a quote mark differs" in out.stdout + out.stderr
