import sys

from mltriage.cli import main

sys.exit(main())
