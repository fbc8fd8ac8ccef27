"""Entry point for ``python -m moderator``."""

from moderator.cli import main

raise SystemExit(main())
