"""``colibri-router token add NAME``: a bearer token for ``serve --http``, printed once.

The token goes to stdout (and nowhere else); its SHA-256 is appended to ``COLIBRI_HTTP_TOKENS_FILE``
as ``NAME:hash``. NAME becomes the caller's name in the ledger and on threads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from colibri_router.errors import ConfigError
from colibri_router.settings import load_settings


def register(commands: Any, provider_names: list[str]) -> None:
    token = commands.add_parser("token", help="manage the bearer tokens of serve --http")
    actions = token.add_subparsers(dest="token_action", required=True, metavar="{add}")
    add = actions.add_parser("add", help="make a token for NAME, print it once, store its hash")
    add.add_argument("name", help="who the token is for (the caller's name in the ledger)")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    # Loaded when the command runs, not with every CLI start (the server's).
    from colibri_router.tokens import add_token

    try:
        configured = load_settings().http_tokens_file
        if not configured:
            raise ConfigError("set COLIBRI_HTTP_TOKENS_FILE to the file that holds the tokens' hashes")
        path = Path(configured).expanduser()
        token = add_token(path, args.name)
    except ConfigError as error:
        sys.stderr.write(f"colibri-router token: {error.message}\n")
        return 2
    stdout.write(token + "\n")
    sys.stderr.write(f"token for {args.name!r} added to {path} (shown once: keep it now)\n")
    return 0
