"""Text from event files made safe for a terminal and for a spreadsheet.

Tags, run names, plugin names, hyperparameters and even file names come from files that anyone
may have written. :func:`printable` escapes every character Python does not call printable
(controls such as ESC sequences that retitle a window, hide text or write the clipboard; format
characters such as bidirectional overrides; separators; surrogates; unassigned code points) as
``\\xNN``, ``\\uNNNN`` or ``\\UNNNNNNNN``, so what reaches the terminal is inert text.
:func:`csv_cell` follows OWASP's CSV-injection guidance: a text cell that starts with ``=``,
``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``, so that a spreadsheet
shows it as text instead of running it as a formula.
"""

from __future__ import annotations

__all__ = ["FORMULA_START", "csv_cell", "printable"]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escape(c: str) -> str:
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str) -> str:
    """``text`` with every non-printable character escaped (see the module docstring)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def csv_cell(text: str) -> str:
    """``text`` prefixed with ``'`` when a spreadsheet would read it as a formula. A NUL
    character is written as the four characters ``\\x00``: Python's csv module before 3.11
    cannot write it at all, and spreadsheets cut a cell at it."""
    text = text.replace("\x00", "\\x00")
    return "'" + text if text.startswith(FORMULA_START) else text
