"""csl_ai: a fast determinized-ISMCTS AI for the card game Candy Spiders Leopards."""

__version__ = "0.1.0"
