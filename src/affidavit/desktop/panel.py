"""The tray's panel: a small Tk window with the vault's state, its last memories and four
buttons (Lock, Unlock…, Open console, Quit), each also on a key (l, u, c, q).

It opens when the tray icon is clicked, or at start when this desktop has no system tray.
Every slow step (a refresh, an unlock) runs on a worker thread and hands its result back to
the Tk thread through a queue, so the window never freezes and Tk is only touched from its
own thread. The passphrase dialog shows a bullet per character; the passphrase goes to
:func:`affidavit.desktop.state.unlock` and nowhere else.
"""

from __future__ import annotations

import queue
import threading
import tkinter as tk
from collections.abc import Callable
from typing import Any

from affidavit.desktop import state as vault_state

COLORS = {
    vault_state.UNLOCKED: "#1e8449",
    vault_state.LOCKED: "#b03a2e",
    vault_state.MISSING: "#7f8c8d",
    vault_state.FAILED: "#7f8c8d",
}
REFRESH_MS = 15_000
_POLL_MS = 100


class Panel:
    """The panel window; ``on_state`` hears every new state (the tray icon follows it)."""

    def __init__(
        self, root: tk.Tk, on_state: Callable[[vault_state.TrayState], None] | None = None
    ) -> None:
        self.root = root
        self.on_state = on_state
        self.inbox: queue.Queue[Callable[[], None]] = queue.Queue()
        self.console: Any = None
        self.current = vault_state.TrayState("", vault_state.LOCKED)
        root.title("affidavit")
        root.geometry("+20+20")
        root.resizable(False, False)
        top = tk.Frame(root, padx=12, pady=10)
        top.pack(fill="both")
        header = tk.Frame(top)
        header.pack(fill="x")
        self.badge = tk.Canvas(header, width=28, height=28, highlightthickness=0)
        self.badge.grid(row=0, column=0, rowspan=2, padx=(0, 10))
        self.headline = tk.Label(header, font=("TkDefaultFont", 12, "bold"), anchor="w")
        self.headline.grid(row=0, column=1, sticky="w")
        self.detail = tk.Label(header, anchor="w", fg="#555555")
        self.detail.grid(row=1, column=1, sticky="w")
        tk.Label(top, text="Last memories stored", anchor="w").pack(fill="x", pady=(10, 2))
        self.memories = tk.Listbox(top, width=64, height=vault_state.RECENT, activestyle="none")
        self.memories.pack(fill="x")
        buttons = tk.Frame(top, pady=8)
        buttons.pack(fill="x")
        for label, key, action in (
            ("Lock", "l", self.lock),
            ("Unlock…", "u", self.unlock),
            ("Open console", "c", self.open_console),
            ("Quit", "q", self.quit),
        ):
            tk.Button(buttons, text=label, underline=0, command=action).pack(side="left", padx=3)
            root.bind(f"<Key-{key}>", _on_key(action))
        root.protocol("WM_DELETE_WINDOW", root.withdraw)
        root.after(_POLL_MS, self._drain)

    # -- state ------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Read the state on a worker thread; show it when it arrives."""
        self._in_background(vault_state.read_state, self.show)

    def refresh_every(self, ms: int = REFRESH_MS) -> None:
        """Refresh now and then every ``ms`` milliseconds (an unlock can expire meanwhile)."""
        self.refresh()
        self.root.after(ms, self.refresh_every, ms)

    def show(self, now: vault_state.TrayState) -> None:
        """Draw ``now``: badge, headline, where the vault is, the memories."""
        self.current = now
        self.root.title(now.title)
        self.badge.delete("all")
        self.badge.create_oval(2, 2, 26, 26, fill=COLORS[now.state], outline="")
        self.headline.configure(text=now.state.capitalize())
        self.detail.configure(text=now.problem or now.vault)
        self.memories.delete(0, "end")
        for line in now.recent:
            self.memories.insert("end", line)
        if now.state == vault_state.LOCKED:
            self.memories.insert("end", "(unlock to see them)")
        if self.on_state is not None:
            self.on_state(now)

    # -- actions ----------------------------------------------------------------------------

    def lock(self) -> None:
        """Lock the vault for every process of this user."""
        self._in_background(vault_state.lock, lambda _message: self.refresh())

    def unlock(self) -> None:
        """Ask for the passphrase in a dialog, then unlock with it."""
        secret = ask_passphrase(self.root)
        if secret is None:
            return
        self.detail.configure(text="unlocking…")
        self._in_background(lambda: vault_state.unlock(secret), self._unlocked)

    def _unlocked(self, problem: str | None) -> None:
        if problem is not None:
            self.show(vault_state.TrayState(self.current.vault, self.current.state, (), problem))
        self.refresh()

    def open_console(self) -> None:
        """Start the console (a fresh one, with a fresh sign-in link, each time)."""
        self._stop_console()
        self.console = vault_state.start_console()

    def quit(self) -> None:
        """Stop the console this panel started, then end."""
        self._stop_console()
        self.root.quit()

    def _stop_console(self) -> None:
        if self.console is not None and self.console.poll() is None:
            self.console.terminate()
            self.console.wait(timeout=10)

    # -- threads ----------------------------------------------------------------------------

    def post(self, action: Callable[[], None]) -> None:
        """Run ``action`` on the Tk thread (safe to call from any thread)."""
        self.inbox.put(action)

    def _in_background(self, work: Callable[[], Any], then: Callable[[Any], None]) -> None:
        def run() -> None:
            result = work()
            self.post(lambda: then(result))

        threading.Thread(target=run, daemon=True).start()

    def _drain(self) -> None:
        while True:
            try:
                action = self.inbox.get_nowait()
            except queue.Empty:
                break
            action()
        self.root.after(_POLL_MS, self._drain)


def _on_key(action: Callable[[], None]) -> Callable[[Any], None]:
    """A key binding that runs ``action`` (the event itself is not needed)."""

    def handler(_event: Any) -> None:
        action()

    return handler


def ask_passphrase(root: tk.Tk) -> str | None:
    """A modal dialog with a masked entry; the passphrase, or None when cancelled."""
    dialog = tk.Toplevel(root)
    dialog.title("Unlock affidavit")
    dialog.geometry("+40+40")
    dialog.transient(root)
    tk.Label(dialog, text="Vault passphrase:", padx=12, pady=8).pack(anchor="w")
    typed = tk.StringVar(dialog)
    entry = tk.Entry(dialog, textvariable=typed, show="•", width=40)
    entry.pack(padx=12)
    answer: list[str] = []

    def done(keep: bool) -> None:
        if keep:
            answer.append(typed.get())
        typed.set("")
        dialog.destroy()

    row = tk.Frame(dialog, pady=8)
    row.pack()
    tk.Button(row, text="Unlock", command=lambda: done(True)).pack(side="left", padx=4)
    tk.Button(row, text="Cancel", command=lambda: done(False)).pack(side="left", padx=4)
    dialog.bind("<Return>", lambda _event: done(True))
    dialog.bind("<Escape>", lambda _event: done(False))
    entry.focus_set()
    dialog.grab_set()
    root.wait_window(dialog)
    return answer[0] if answer and answer[0] else None
