"""`python -m fptrack` runs the `fptrack` program."""
import sys

from fptrack.cli import main

sys.exit(main())
