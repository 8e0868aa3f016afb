"""Training phases of the tour: the same step, eagerly and with ``hookgrad.compile``."""
import statistics
import sys
import time

import hookgrad as torch
import hookgrad.nn.functional as F


def make_step(model, opt):
    """The training step, as a PyTorch script writes it."""
    def step(x, y):
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    return step


def batches(loader, steps):
    """``steps`` batches, going round the DataLoader as often as needed."""
    n = 0
    while True:
        for batch in loader:
            if n == steps:
                return
            n += 1
            yield batch


class Progress:
    """tqdm's bar when tqdm is installed, else a line every tenth of the way (on stderr)."""

    def __init__(self, total, desc):
        self.total, self.desc, self.n = total, desc, 0
        try:
            from tqdm import tqdm
        except ImportError:
            self.bar = None
        else:
            self.bar = tqdm(total=total, desc=desc, unit="step", file=sys.stderr,
                            dynamic_ncols=True, mininterval=0.5)

    def update(self, loss):
        self.n += 1
        if self.bar is not None:
            self.bar.update(1)
            if self.n % 10 == 0 or self.n == self.total:
                self.bar.set_postfix(loss=f"{loss:.3f}", refresh=False)
        elif self.n == self.total or self.n % max(1, self.total // 10) == 0:
            print(f"{self.desc}: {self.n}/{self.total} steps, loss {loss:.3f}", file=sys.stderr,
                  flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def run_phase(step, loader, steps, device, desc, timer=None, timed_steps=0):
    """Run ``step`` for ``steps`` batches; the last ``timed_steps`` run inside ``timer``.

    Returns the losses and the wall-clock time of each step (``.item()`` on the loss
    waits for the step to finish, so each time is the whole step's).
    """
    losses, times = [], []
    progress = Progress(steps, desc)
    try:
        for i, (x, y) in enumerate(batches(loader, steps)):
            x, y = x.to(device), y.to(device)
            start = time.perf_counter()
            if timer is not None and i >= steps - timed_steps:
                with timer:
                    loss = step(x, y).item()
            else:
                loss = step(x, y).item()
            times.append(time.perf_counter() - start)
            losses.append(loss)
            progress.update(loss)
    finally:
        progress.close()
    return losses, times


def steady_ms(times, skip, timed_steps=0):
    """(median, best) milliseconds per step after the first ``skip`` (one-time
    compilation), not counting the last ``timed_steps`` (they ran under the module timer).
    The best step is what the machine can do when nothing else competes for it."""
    body = times[skip:len(times) - timed_steps] or times[-1:]
    return 1e3 * statistics.median(body), 1e3 * min(body)


@torch.no_grad()
def accuracy(model, instruments, x, y, batch=64):
    """Accuracy on ``x``, ``y`` in batches of the training batch's size: the kernels
    compiled for training serve (a new batch size would compile every op again)."""
    instruments.recording = False   # an evaluation is not a training step
    try:
        right = sum((model(x[i:i + batch]).argmax(dim=1) == y[i:i + batch]).sum()
                    for i in range(0, len(x), batch))
        return right.item() / len(x)
    finally:
        instruments.recording = True
