"""The command-line kit both programs (`simtool`, `fptrack`) are made of: one-line errors, progress
bars, listings as a table, CSV or JSON (`common`), command groups that suggest the closest
command (`groups`), work spread over processes (`parallel`), safe table cells (`cells`) and
counted nouns (`plural`).

May import: fingerprint and clikit.
"""
