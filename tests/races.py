"""Two requests at once, as two gunicorn workers answer them: each on a thread of its own, the test app's error
counted as the 500 a server would answer, and a gate inside a service that both reach before either writes (it
gives up after `timeout` seconds: a request that waits for the other's lock never reaches it)."""
from __future__ import annotations

import threading
from types import SimpleNamespace

from inspect_app.extensions import db


def at_once(*calls):
    """Each call's answer, the calls run on threads of their own at once (the test's session holds nothing)."""
    db.session.remove()
    answers = [None] * len(calls)

    def run(i):
        try:
            answers[i] = calls[i]()
        except Exception as error:  # noqa: BLE001  (the test app propagates it; gunicorn answers 500)
            answers[i] = SimpleNamespace(status_code=500, error=error, text=repr(error))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return answers


def gated(monkeypatch, module, *names: str, timeout: float = 2) -> None:
    """Each named function of `module` waits at one gate, for two callers, before it runs."""
    gate = threading.Barrier(2)
    for name in set(names):
        original = getattr(module, name)

        def waiting(*args, _original=original, **kwargs):
            try:
                gate.wait(timeout=timeout)
            except threading.BrokenBarrierError:
                pass
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, waiting)
