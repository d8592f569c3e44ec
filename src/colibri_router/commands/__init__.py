"""The ``colibri-router`` subcommands other than ``serve``: one module each, each with ``register``
(its argparse parser) and ``run`` (the command, writing to the given streams, returning the exit
status). Heavy imports happen inside ``run``, so ``--help`` and serving stay quick."""
