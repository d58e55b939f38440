"""`python -m quoteproof` runs the command line."""

from quoteproof.cli import main

main()
