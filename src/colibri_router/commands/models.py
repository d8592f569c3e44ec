"""``colibri-router models``: the router_models tool from the terminal."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from colibri_router.commands.output import emit_outcome

PRINTS_JSON = True  # a bad option or value is printed as the INVALID_REQUEST error object (exit 1)


def register(commands: Any, provider_names: list[str]) -> None:
    models = commands.add_parser("models", help="list providers, their models and the aliases")
    models.add_argument("--provider", choices=provider_names, help="only this provider")
    models.add_argument("--live", action="store_true", help="also ask each configured provider's model list")


def run(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    # The service and its models load when the command runs, not with every CLI start (the server's).
    from colibri_router.catalog.schema import RouterModelsInput
    from colibri_router.catalog.service import list_models

    return emit_outcome(stdout, lambda: list_models(RouterModelsInput(provider=args.provider, live=args.live)))
