import sys

from swarmgate.cli import main

sys.exit(main())
