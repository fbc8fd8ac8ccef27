"""One module per ``moderator`` subcommand; each exposes ``register(subparsers)``.

``register`` adds the subparser and sets ``func`` to a ``run(args, env) -> int``.
"""
