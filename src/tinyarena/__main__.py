"""``python -m tinyarena``."""

from tinyarena.cli import main

raise SystemExit(main())
