"""Counting the calls of a function a test watches (a deterministic count of work done)."""


def watch(monkeypatch, owner, name, *emptied):
    """The positional arguments of each call of ``owner.name`` from now on (still called),
    ``owner``'s dict attributes ``emptied`` replaced by empty ones for the test (what it
    remembers: the count starts from nothing)."""
    calls = []
    real = getattr(owner, name)

    def called(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)
    monkeypatch.setattr(owner, name, called)
    for attribute in emptied:
        monkeypatch.setattr(owner, attribute, {})
    return calls
