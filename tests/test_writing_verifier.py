"""The exact Creative Writing checks: sentence splitting of the paper's inputs and paragraph endings."""


import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.datafiles import shared_data
from tests.profiles import examples
from verifiers.writing import check_passage, ending_problem, normalise, paragraphs, split_sentences

DATA = shared_data("text/data_100_random_text.txt")  # a missing file fails these tests, never skips them

FUSED = {
    5: "Instead of a bachelorette party",
    28: "The heat",
    49: "Instead of a bachelorette party",
    59: "Instead of a bachelorette party",
    81: "Instead of a bachelorette party",
}


def _lines() -> list[str]:
    return DATA.read_text(encoding="utf-8").splitlines()


def test_all_100_inputs_split_into_four_sentences_covering_the_line():
    lines = _lines()
    assert len(lines) == 100
    for i, line in enumerate(lines):
        parts = split_sentences(line, fragments=True)
        assert len(parts) == 4, i
        assert " ".join(parts) == " ".join(line.split()), i
        fragments = [p for p in parts if p[-1] not in ".!?\"'\u2019\u201d"]
        if i in FUSED:
            assert fragments == [FUSED[i]], i  # the cut-off fragment becomes its own sentence
        else:
            assert fragments == [], i  # punctuation alone splits the other 95 lines


def test_fused_line_5_exactly_and_curly_apostrophes_kept():
    s = split_sentences(_lines()[5], fragments=True)
    assert s[0] == "He was surprised that his immense laziness was inspirational to others."
    assert s[1] == "Instead of a bachelorette party"
    assert s[2].startswith("You realize you're not alone") and s[2].endswith("with Grandpa Joe in the hospital.")
    assert s[3] == "If I don\u2019t like something, I\u2019ll stay away from it."


def test_curly_apostrophes_in_the_data_equal_straight_ones_only_with_normalise_quotes():
    line = _lines()[1]
    sentences = split_sentences(line)
    assert any("\u2019" in s for s in sentences)
    passage = "\n\n".join(f"Story part {i}. {normalise(s)}" for i, s in enumerate(sentences))
    assert "\u2019" not in passage
    problem = check_passage(sentences, passage)
    assert problem is not None and "a quote mark differs" in problem.reason
    assert check_passage(sentences, passage, frozenset({"quotes"})) is None


@pytest.mark.parametrize("text, expected", [
    ("A cat sat. It rained! Was it? Yes.", ("A cat sat.", "It rained!", "Was it?", "Yes.")),
    ('He said "hi." Then he left. "Go," she said. 3 dogs ran.',
     ('He said "hi."', "Then he left.", '"Go," she said.', "3 dogs ran.")),
    ("  One   here.\nTwo\there. Three here.   Four here.  ", ("One here.", "Two here.", "Three here.", "Four here.")),
    ("The end came\nThe cat sat. I ran.\n\nWe hid.\nAll  done", ("The end came", "The cat sat. I ran.", "We hid.",
                                                                 "All done")),
    ("Then I walked. It was over. He ran. 1.5 is a number.", ("Then I walked.", "It was over.", "He ran.",
                                                             "1.5 is a number.")),
])
def test_split_rule(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize("text, why", [
    ("", "empty"), ("   ", "empty"), ("One. Two. Three. Four. Five.", "splits into 5"),
    ("only one sentence here.", "splits into 1"), ("x" * 5000, "characters"),
    ("One sentence. And another one. A third one.", "splits into 3"),
])
def test_split_errors_are_one_line(text, why):
    with pytest.raises(ValueError, match=why) as exc:
        split_sentences(text)
    assert "\n" not in str(exc.value)


def test_pronoun_i_is_not_taken_for_a_fused_sentence():
    with pytest.raises(ValueError, match="splits into 3"):
        split_sentences("Then said I am here. It was late. We left.")


S = ("The kettle began to sing.", "Nobody had fed the goldfish.", "Maria laughed until she cried.",
     "The storm passed before dawn.")


def _passage(ends=S, sep="\n\n"):
    return sep.join(f"Some words {i}, then more. {e}" for i, e in enumerate(ends))


def test_good_passage_passes_with_layout_variations():
    assert check_passage(S, _passage()) is None
    assert check_passage(S, "\n\n" + _passage(sep="\r\n \r\n\n") + "\n\n\n") is None
    assert check_passage(S, _passage().replace(" then", "\nthen")) is None  # single newline: same paragraph
    assert check_passage(S, "\n\n".join(S)) is None  # a paragraph may be just the sentence
    wide = _passage().replace("The kettle", "\uff34he kettle")  # fullwidth T: NFKC makes it T
    assert check_passage(S, wide) is not None  # strict by default
    assert check_passage(S, wide, frozenset({"nfkc"})) is None


def test_paragraph_count_is_exact():
    p = check_passage(S, _passage(S[:3]))
    assert p is not None and p.paragraph is None and "found 3" in p.reason
    assert check_passage(S, _passage(S) + "\n\nAn extra paragraph.") is not None
    assert "found 1" in check_passage(S, _passage(sep=" ")).reason
    assert "found 0" in check_passage(S, "").reason


def test_first_failing_paragraph_and_why():
    bad = _passage((S[0], S[1], "Maria laughed.", "Nope."))
    p = check_passage(S, bad)
    assert p.paragraph == 3
    assert p.reason.startswith("paragraph 3 must end with sentence 3")
    assert "Maria laughed until she cried." in p.reason


def test_wrong_order_is_named():
    p = check_passage(S, _passage((S[1], S[0], S[2], S[3])))
    assert p.paragraph == 1 and "sentence 2 instead" in p.reason


def test_word_boundary_and_case_matter():
    assert ending_problem("It rained.", "Then it rained.") is not None  # case counts
    assert ending_problem("rained.", "It rained.") is None
    assert "inside a longer word" in ending_problem("rained.", "It unrained.")
    assert ending_problem("He said no.", 'She asked. "He said no.') is None  # after an opening quote
    assert ending_problem("It rained.", "It rained. ") is None


def test_fragment_may_take_end_punctuation_but_full_sentence_may_not_be_extended():
    assert ending_problem("Instead of a bachelorette party", "We went out. Instead of a bachelorette party.") is None
    assert ending_problem("Instead of a bachelorette party", "Instead of a bachelorette party!") is None
    assert ending_problem("Instead of a bachelorette party", "Instead of a bachelorette party, we ran.") is not None
    assert ending_problem("It rained.", "It rained..") is not None
    assert ending_problem("It rained.", "It rained") is not None


def test_quotes_and_spaces_normalised():
    curly = "People say \u201corange\u201d, I don\u2019t."
    assert ending_problem(curly, "Well. People  say \u201corange\u201d,\nI don\u2019t.") is None
    assert ending_problem(curly, "Well. People  say \"orange\",\nI don't.") is not None  # strict
    assert ending_problem(curly, "Well. People  say \"orange\",\nI don't.", frozenset({"quotes"})) is None
    assert normalise("a\u00a0b\u2003c \u2018x\u2019") == "a b c 'x'"


def test_paragraph_split():
    assert paragraphs("a\n\nb\n \t\nc\n") == ["a", "b", "c"]
    assert paragraphs("a\nb") == ["a\nb"]


# -- properties -----------------------------------------------------------------------------------

_WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ ,;'", max_size=60)
_SENTENCES = (list(S) + [split for line in _lines()[:40] for split in split_sentences(line, fragments=True)]
              + ["Instead of a bachelorette party", "The heat"])


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(_WORDS, min_size=4, max_size=4), st.lists(st.sampled_from(_SENTENCES), min_size=4, max_size=4),
       st.sampled_from(["\n\n", "\n \n", "\r\n\r\n", "\n\n\n"]))
def test_any_paragraphs_with_the_right_endings_pass(prefixes, sentences, sep):
    passage = sep.join(((p.strip() + " ") if p.strip() else "") + s for p, s in zip(prefixes, sentences, strict=True))
    assert check_passage(tuple(sentences), passage) is None


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(_WORDS, min_size=4, max_size=4), st.lists(st.sampled_from(_SENTENCES), min_size=4, max_size=4),
       st.integers(0, 3), st.sampled_from(["append", "delete", "replace"]), st.integers(0, 10**6),
       st.sampled_from("abcxyzQ"))
def test_any_change_to_an_ending_fails(prefixes, sentences, which, kind, pos, letter):
    paras = [((p.strip() + " ") if p.strip() else "") + s for p, s in zip(prefixes, sentences, strict=True)]
    sent = sentences[which]
    start = len(paras[which]) - len(sent)
    k = start + pos % len(sent)  # a position inside the required sentence
    para = paras[which]
    if kind == "append":
        para = para + letter
    elif kind == "delete":
        para = para[:k] + para[k + 1:]
    else:
        if para[k] == letter:
            letter = "w" if letter != "w" else "v"
        para = para[:k] + letter + para[k + 1:]
    paras[which] = para
    problem = check_passage(tuple(sentences), "\n\n".join(paras))
    assert problem is not None
    assert problem.paragraph == which + 1
