import sys

from isrcheck.cli import main

sys.exit(main())
