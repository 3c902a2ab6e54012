"""B1: every rule id of RULES.md has the statute's words behind it, quoted from the text itself."""

import re
from pathlib import Path

import pytest

from qmcredit.law.statute import WORDS, words

STATUTE = Path(__file__).resolve().parents[3] / "shared" / "statute" / "52-27BBB-55.txt"


def test_every_rule_id_has_words():
    ids = [f"{k}{n}" for k, hi in (("E", 5), ("W", 3), ("P", 5), ("C", 3), ("L", 5), ("R", 3), ("B", 2)) for n in range(1, hi + 1)]
    assert sorted(WORDS) == sorted(ids)
    assert [r for r, _, _ in words("W1-W3")] == ["W1", "W2", "W3"]


def test_the_words_are_the_statute_s():
    if not STATUTE.is_file():
        pytest.skip("../shared/statute not beside this checkout")
    norm = lambda t: re.sub(r"\s+", " ", t.replace("\u201c", '"').replace("\u201d", '"').replace("\u2019", "'"))  # noqa: E731
    text = norm(STATUTE.read_text())
    for rule, (_, quote) in WORDS.items():
        for piece in norm(quote).split(" ... "):
            piece = piece.strip(" .;")
            assert piece in text, (rule, piece)
