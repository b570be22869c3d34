"""``python -m tcplab`` runs the ``tcplab`` command."""

import sys

from .cli import main

sys.exit(main())
