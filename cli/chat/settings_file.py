"""The settings files themselves: reading one (an error names the file), adding a trusted folder
to the user's file, and resetting it with a backup kept."""

from __future__ import annotations

import json
import re
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

from .places import shown

TRUSTED = "trusted_folders"
TRUSTED_LINE = re.compile(r"^trusted_folders\s*=\s*\[.*?\][ \t]*$", re.MULTILINE | re.DOTALL)


class SettingsFileError(Exception):
    """A settings file that cannot be read or written; the message names it."""


def read_toml(path: Path) -> dict[str, Any]:
    """The file's table (empty when it does not exist)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as err:
        raise SettingsFileError(f"{shown(path)}: cannot be read: {err.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise SettingsFileError(f"{shown(path)}: not valid TOML: {err}") from None


def add_trusted(path: Path, folder: Path) -> list[str]:
    """Add `folder` to `trusted_folders` in the file at `path` (created if missing), keeping the
    rest of the file as it is; the folders now trusted."""
    folders = [str(f) for f in read_toml(path).get(TRUSTED, [])]
    if str(folder) in folders:
        return folders
    folders.append(str(folder))
    line = f"{TRUSTED} = {json.dumps(folders, ensure_ascii=False)}"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if TRUSTED_LINE.search(text):
        text = TRUSTED_LINE.sub(lambda _: line, text, count=1)
    else:
        text = f"{line}\n{text}"  # first, so it never falls into a table further down
    try:
        written = tomllib.loads(text).get(TRUSTED)
    except tomllib.TOMLDecodeError:
        written = None
    if written != folders:  # an unusual layout: leave the file alone rather than break it
        raise SettingsFileError(f"{shown(path)}: could not record {TRUSTED}; add {str(folder)!r} by hand")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return folders


def reset(path: Path) -> Path | None:
    """Move the file aside (`settings.toml.bak-<time>`), so the defaults apply; the backup, or
    None when there was no file."""
    if not path.exists():
        return None
    backup = path.with_name(f"{path.name}.bak-{datetime.now().strftime('%Y%m%d-%H%M%S')}")
    path.rename(backup)
    return backup
