"""COLIBRI_DATABASE_URL: which database ``open_store`` and ``shared_store`` open, what a malformed
URL says (never the URL itself: it may hold a password), and locations shown without passwords.
No server is needed: a PostgreSQL store connects on its first call, never on construction."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from colibri_router.errors import ConfigError
from colibri_router.settings import load_settings
from colibri_router.store import open_store, parse_database_url, shared_store, without_password
from colibri_router.store.postgres import PostgresStore
from colibri_router.store.sqlite import SqliteStore

_segment = st.text(st.characters(exclude_characters="/\x00", exclude_categories=["Cs"]), min_size=1, max_size=12)
_secret = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=20).map(lambda text: "pw-" + text)


def test_a_relative_sqlite_url_names_a_file_in_the_current_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLIBRI_DATABASE_URL", "sqlite:///team/colibri.db")
    store = open_store()
    assert isinstance(store, SqliteStore)
    assert store.location == str(tmp_path / "team" / "colibri.db")


def test_an_absolute_sqlite_url_names_that_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLIBRI_DATABASE_URL", f"sqlite:///{tmp_path}/colibri.db")  # four slashes in all
    store = open_store(tmp_path / "ignored-state-dir")
    assert isinstance(store, SqliteStore)
    assert store.location == str(tmp_path / "colibri.db")


@given(st.lists(_segment, min_size=1, max_size=4))
def test_sqlite_url_paths_are_percent_decoded(segments: list[str]) -> None:
    relative = "/".join(segments)
    assert parse_database_url("sqlite:///" + quote(relative)) == Path(relative).absolute()
    assert parse_database_url("sqlite:////" + quote(relative)) == Path("/" + relative)


@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "PostgreSQL"])
def test_a_postgresql_url_opens_a_postgresql_store_without_connecting(
    monkeypatch: pytest.MonkeyPatch, scheme: str
) -> None:
    url = f"{scheme}://colibri:s3cret@db.internal:6432/colibri?sslmode=require"
    assert parse_database_url(url) == url
    monkeypatch.setenv("COLIBRI_DATABASE_URL", url)
    store = open_store()
    assert isinstance(store, PostgresStore)
    assert store.location == f"{scheme.lower()}://colibri@db.internal:6432/colibri?sslmode=require"


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://host1:5432,host2:5433/colibri",
        "postgresql://[::1]:5432/colibri",
        "postgresql://[::1]/colibri",
        "postgresql:///colibri?host=/var/run/postgresql",
        "postgresql://",
    ],
)
def test_every_form_libpq_reads_is_accepted(url: str) -> None:
    assert parse_database_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "mysql://user@host/colibri",
        "postgresql+asyncpg://user@host/colibri",
        "colibri.db",
        "/var/lib/colibri.db",
        "sqlite://colibri.db",  # two slashes: colibri.db would be a host
        "sqlite://",
        "sqlite:///",
        "sqlite:///state/",
        "sqlite:///colibri.db?mode=ro",
        "sqlite:///colibri.db#top",
        "sqlite:colibri.db",
        "postgresql://host:0/colibri",
        "postgresql://host:65536/colibri",
        "postgresql://host:port/colibri",
        "postgresql://host:/colibri",
        "postgresql://host:١٢/colibri",  # digits, but not ASCII ones
        "postgresql://host1:5432,host2:x/colibri",
        "postgresql://[::1/colibri",
        "postgresql://[::1]x/colibri",
    ],
)
def test_other_schemes_and_malformed_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError, match="COLIBRI_DATABASE_URL"):
        parse_database_url(url)


@given(_secret)
def test_no_message_about_a_malformed_url_repeats_its_password(password: str) -> None:
    encoded = quote(password, safe="")
    for url in (
        f"postgresql://colibri:{encoded}/colibri",  # the host forgotten: the password reads as a port
        f"mysql://colibri:{encoded}@db/colibri",
        f"sqlite://colibri:{encoded}@db/colibri.db",
    ):
        with pytest.raises(ConfigError) as raised:
            parse_database_url(url)
        assert password not in str(raised.value)
        assert encoded not in str(raised.value)


@given(
    user=st.text(st.characters(categories=["L", "N"]), max_size=8),
    password=_secret,
    hosts=st.sampled_from(["db", "db:5432", "[::1]:5432", "a:1,b:2"]),
    query=st.sampled_from(["", "sslmode=require", "sslmode=require&application_name=colibri"]),
    password_in_query=st.booleans(),
)
def test_a_location_shows_the_url_without_any_password(
    user: str, password: str, hosts: str, query: str, password_in_query: bool
) -> None:
    encoded = quote(password, safe="")
    query_with_password = "&".join(part for part in (query, f"password={encoded}" if password_in_query else "") if part)
    url = f"postgresql://{user}:{encoded}@{hosts}/colibri" + (f"?{query_with_password}" if query_with_password else "")
    expected = f"postgresql://{user}@{hosts}/colibri" if user else f"postgresql://{hosts}/colibri"
    assert without_password(url) == expected + (f"?{query}" if query else "")
    assert PostgresStore(url, thread_ttl_days=30).location == without_password(url)


def test_the_store_switch_wins_over_any_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLIBRI_STORE", "off")
    monkeypatch.setenv("COLIBRI_DATABASE_URL", "not a url at all")
    assert open_store() is None
    assert shared_store(load_settings()) is None


def test_the_shared_store_is_one_per_database_and_lifetime(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("COLIBRI_DATABASE_URL", "postgresql://colibri@db/one")
    one = shared_store(load_settings())
    assert one is shared_store(load_settings())
    monkeypatch.setenv("COLIBRI_DATABASE_URL", "postgresql://colibri@db/two")
    two = shared_store(load_settings())
    monkeypatch.setenv("COLIBRI_THREAD_TTL_DAYS", "7")
    two_for_a_week = shared_store(load_settings())
    monkeypatch.delenv("COLIBRI_DATABASE_URL")
    monkeypatch.delenv("COLIBRI_THREAD_TTL_DAYS")
    local = shared_store(load_settings())
    assert len({id(one), id(two), id(two_for_a_week), id(local)}) == 4
    assert isinstance(local, SqliteStore)
    assert local is shared_store(load_settings())


def test_a_postgresql_url_without_asyncpg_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "asyncpg", None)  # what an installation without the extra looks like
    monkeypatch.setenv("COLIBRI_DATABASE_URL", "postgresql://colibri@db/colibri")
    with pytest.raises(ConfigError, match=r"pip install 'colibri-router\[postgres\]'"):
        open_store()
