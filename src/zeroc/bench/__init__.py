"""``zeroc bench``: the side-by-side comparison of Zeroc with the formats APIs use today."""

from zeroc.bench._messages import run
from zeroc.bench._report import markdown, plot, table, verdict

__all__ = ["markdown", "plot", "run", "table", "verdict"]
