"""git's wildmatch in pathname mode, as our regex translation matches it (cases written from
gitignore(5) and git's wildmatch.c semantics; the ignore-rule tests check the same against git)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.context.wildmatch import compiled


@pytest.mark.parametrize(
    ("pattern", "text", "matches"),
    [
        ("foo", "foo", True),
        ("foo", "foobar", False),
        ("*", "foo", True),
        ("*", "foo/bar", False),  # * stays within a name
        ("f*o", "fxo", True),
        ("?", "a", True),
        ("?", "/", False),
        ("??", "é", True),  # bytes: é is two
        ("?", "é", False),
        ("**", "a/b/c", True),
        ("**/c", "c", True),
        ("**/c", "a/b/c", True),
        ("a/**/c", "a/c", True),
        ("a/**/c", "a/b/x/c", True),
        ("a/**", "a/b/c", True),
        ("a/**", "a", False),
        ("a**c", "abc", True),  # ** inside a name is one *
        ("a**c", "a/c", False),
        ("***/c", "x/y/c", True),
        ("[abc]", "b", True),
        ("[!abc]", "b", False),
        ("[^abc]", "d", True),
        ("[^abc]", "/", False),  # a class never matches a slash
        ("[a-c]x", "bx", True),
        ("[c-a]x", "bx", False),  # a reversed range is empty
        ("[]a]", "]", True),
        ("[!]a]", "]", False),
        ("[a-]", "-", True),
        ("[\\]]", "]", True),
        ("[[:digit:]]", "7", True),
        ("[[:digit:][:upper:]]", "Q", True),
        ("[[:lower:]]", "Q", False),
        ("[[:space:]]", " ", True),
        ("[[:punct:]]", "!", True),
        ("[[:xdigit:]]", "g", False),
        ("[[:nope:]]", "n", False),  # a malformed class matches nothing
        ("[[:]", "[", True),  # no ``:]``: an ordinary ``[``
        ("[abc", "a", False),  # an open class matches nothing
        ("[abc", "[abc", False),
        ("\\*", "*", True),
        ("\\*", "x", False),
        ("a\\", "a", False),  # a trailing backslash matches nothing
        ("a\\", "a\\", False),
        ("\\[a]", "[a]", True),
        ("a/b", "a/b", True),
        ("a?b", "a/b", False),
    ],
)
def test_patterns_match_as_git_matches_them(pattern: str, text: str, matches: bool) -> None:
    assert (compiled(pattern).fullmatch(text.encode()) is not None) is matches


@given(st.text(alphabet="ab/.", min_size=1, max_size=12))
def test_double_star_alone_matches_any_path_and_star_any_name(text: str) -> None:
    assert compiled("**").fullmatch(text.encode()) is not None
    assert (compiled("*").fullmatch(text.encode()) is not None) is ("/" not in text)


@given(
    st.text(
        alphabet=st.characters(blacklist_characters="*?[\\/", blacklist_categories=("Cs",)), min_size=1, max_size=12
    )
)
def test_a_pattern_without_special_characters_matches_only_itself(text: str) -> None:
    assert compiled(text).fullmatch(text.encode()) is not None
    assert compiled(text).fullmatch((text + "x").encode()) is None


def test_a_lone_surrogate_matches_nothing() -> None:
    assert compiled("a\ud800*").fullmatch(b"a") is None
