"""What a typed line that is not a command becomes: a message to the agent, with the files its
`@path`s name; `!cmd` a shell command for the agent's terminal tool (still gated); `!` alone
switches shell mode, where every line is a command.

`@path` reads only inside trusted folders. The first time a path lies outside them the person is
asked whether to trust its folder (its project); the answer `y` is kept in the user's settings.
"""

from __future__ import annotations

from pathlib import Path

from core.client import SynapseError

from . import attach
from .chat import Chat, CommandError
from .places import shown
from .settings_file import SettingsFileError, add_trusted
from .trust import folder_to_trust, trusted_folder


async def send_line(chat: Chat, line: str) -> None:
    """Send what was typed (not a slash command) as the person meant it."""
    text = line.strip()
    state = chat.state
    if text == "!":
        state.shell_mode = not state.shell_mode
        chat.renderer.note(
            "shell mode: each line is a command for the agent's terminal (`!` again leaves)"
            if state.shell_mode
            else "shell mode off: lines go to the agent as messages"
        )
        return
    if text.startswith("//"):
        text = text[1:]
    elif state.shell_mode and not text.startswith("!"):
        text = f"!{text}"
    if not text:
        return
    if text.startswith("!"):
        await chat.send(text)
        return
    refs = attach.references(text, chat.cwd)
    if not refs:
        await chat.send(text)
        return
    for ref in refs:
        if ref.path.exists() and not await _may_read(chat, ref.path):
            raise CommandError(f"@{ref.typed} is outside your trusted folders; nothing was sent")
    settings = chat.effective.settings
    gathered = attach.gather(
        refs,
        chat.cwd,
        inline_limit=settings.inline_limit_bytes,
        max_files=settings.attach_max_files,
        trusted=settings.trusted_folders,
    )
    for skipped in gathered.skipped:
        chat.renderer.note(f"  skipped {skipped}", "yellow")
    if not gathered.files:
        raise CommandError("none of the @files could be attached; nothing was sent")
    ids: dict[str, str] = {}
    for file in gathered.files:
        if file.artifact:
            chat.renderer.note(
                f"  {file.shown} ({len(file.data)} bytes, {file.why}): sent as an artifact", "yellow"
            )
            try:
                info = await chat.client.upload_artifact(
                    file.data, name=Path(file.shown).name, project=chat.upload_project
                )
            except SynapseError as err:
                raise CommandError(
                    f"{file.shown} could not be uploaded: {err.detail}; nothing was sent"
                ) from None
            ids[file.shown] = info.artifact_id
        else:
            chat.renderer.note(f"  attached {file.shown} ({len(file.data)} bytes)")
    await chat.send(attach.compose(text, gathered.files, ids), artifacts=list(ids.values()))


async def _may_read(chat: Chat, path: Path) -> bool:
    """Whether `path` may be attached: inside a trusted folder, or in one the person trusts now."""
    if trusted_folder(path, chat.effective.settings.trusted_folders) is not None:
        return True
    folder = folder_to_trust(path)
    chat.renderer.note(f"{shown(path)} is not in a trusted folder.", "yellow")
    key = await chat.prompts.key(f"Trust {shown(folder)} (its files can then be attached)? [y/n] › ", "yn")
    if key != "y":
        return False
    try:
        add_trusted(chat.effective.user_file, folder)
    except SettingsFileError as err:
        chat.renderer.error(str(err))
        return False
    chat.effective.settings.trusted_folders = [*chat.effective.settings.trusted_folders, str(folder)]
    chat.effective.sources["trusted_folders"] = shown(chat.effective.user_file)
    chat.renderer.note(f"  trusted {shown(folder)} (kept in {shown(chat.effective.user_file)})")
    return True
