"""What commands print: `--output json` prints the API's documents as they are (for scripts and jq);
`--output table` (the default) prints Rich tables. Errors go to stderr, one line each."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table


def _console() -> Console:
    """Bound to the current stdout at each call; piped output gets a wide table instead of 80 columns."""
    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console = Console(soft_wrap=False, width=160)
    return console


def emit_json(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, sort_keys=False) + "\n")


def emit_table(
    title: str | None, columns: Sequence[str], rows: Sequence[Sequence[Any]], nowrap: Sequence[int] = ()
) -> None:
    """`nowrap`: the columns (by index) whose cells stay on one line (times, names): the others fold."""
    # Cells are text, never Rich markup: "[parameters('site')]" or a message in brackets is shown as it is.
    table = Table(title=escape(title) if title else None, show_lines=False, header_style="bold")
    for index, column in enumerate(columns):
        table.add_column(column, overflow="fold", no_wrap=index in nowrap)
    for row in rows:
        table.add_row(*("" if cell is None else escape(str(cell)) for cell in row))
    _console().print(table)


def emit_fields(title: str, fields: Sequence[tuple[str, Any]]) -> None:
    table = Table(title=escape(title), show_header=False, box=None)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for name, value in fields:
        table.add_row(escape(name), "" if value is None else escape(str(value)))
    _console().print(table)


def emit_message(text: str) -> None:
    _console().print(text, highlight=False, markup=False)


def warn(messages: Sequence[str]) -> None:
    """Warnings (members the API ignores, secrets an export cannot carry) on stderr, one line each."""
    for message in messages:
        sys.stderr.write(f"warning: {message}\n")


def error_line(text: str) -> None:
    sys.stderr.write(text + "\n")
