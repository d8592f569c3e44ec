"""``python -m colibri_router`` is the ``colibri-router`` command."""

from colibri_router.cli import main

raise SystemExit(main())
