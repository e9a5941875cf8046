"""The time rule of a late call (codea1.sandbox.executor._read_call), on simulated clocks: the verdict
depends on the CPU a call used and on the time it spent waiting for nothing (sleeping, blocked), never on
how long it waited for a core on a loaded machine. No wall clock is read: the reader, the CPU clock and the
run-queue clock are driven by one simulated time."""

from __future__ import annotations

import pytest

from codea1.sandbox import executor


class Sim:
    """One simulated call: it computes at `cpu_rate` CPU-seconds per second, waits for a core at
    `queue_rate`, sleeps the rest, and returns once it has used `work` CPU-seconds (never, with None)."""

    def __init__(self, cpu_rate: float, queue_rate: float, work: float | None) -> None:
        self.now, self.cpu_rate, self.queue_rate, self.work = 0.0, cpu_rate, queue_rate, work
        self.looks = 0

    def monotonic(self) -> float:
        return self.now

    def cpu(self) -> float:
        return self.cpu_rate * self.now

    def stall(self):  # the clock starts when the call is late (as the executor makes it)
        start = self.queue_rate * self.now
        return lambda: self.queue_rate * self.now - start

    def read(self, deadline: float) -> dict | str:
        self.looks += 1
        done_at = None if self.work is None else self.work / self.cpu_rate
        if done_at is not None and done_at <= deadline:
            self.now = max(self.now, done_at)
            return {"i": 0, "k": "ok", "v": None}
        self.now = deadline
        return "timeout"


def _verdict(sim: Sim, monkeypatch: pytest.MonkeyPatch, timeout: float = 1.0, run_queue: bool = True):
    monkeypatch.setattr(executor.time, "monotonic", sim.monotonic)
    reader = type("Reader", (), {"read": staticmethod(sim.read)})()
    return executor._read_call(reader, 0.0, timeout, sim.cpu, sim.stall if run_queue else None)


@pytest.mark.parametrize("share", [0.2, 0.1, 0.05])
def test_an_honest_call_starved_by_load_is_judged_by_its_cpu(share, monkeypatch):
    """0.7 CPU-s under a 1 s limit, given `share` of a core (load 5x, 10x, 20x the cores): it waits for a
    core the rest of the time and returns after 0.7 / share seconds; under the old rule (CPU rate over the
    last look under 2%: waiting) a starved call could be cut; here it is a result."""
    sim = Sim(cpu_rate=share, queue_rate=1.0 - share, work=0.7)
    frame = _verdict(sim, monkeypatch)
    assert isinstance(frame, dict) and sim.now == pytest.approx(0.7 / share)


def test_a_starved_call_at_one_percent_is_still_not_waiting(monkeypatch):
    sim = Sim(cpu_rate=0.01, queue_rate=0.99, work=0.15)  # returns after 15 limits, under WALL_CAP
    assert isinstance(_verdict(sim, monkeypatch), dict)


def test_a_duty_cycled_call_is_cut_as_waiting_within_the_backstop(monkeypatch):
    """4% CPU, the rest asleep: it held its slot for 14 limits and one that returned after them passed; the
    sleep now adds up over the whole late span, and the call is cut near WALL_BACKSTOP limits as WAITED."""
    sim = Sim(cpu_rate=0.04, queue_rate=0.0, work=0.56)  # would return at 14 limits
    assert _verdict(sim, monkeypatch) == executor.WAITED
    assert sim.now <= executor.WALL_BACKSTOP * 1.0 + executor.GRACE + 0.3


def test_a_sleeping_call_is_waiting_and_a_spinning_one_times_out_on_cpu(monkeypatch):
    assert _verdict(Sim(cpu_rate=0.0, queue_rate=0.0, work=None), monkeypatch) == executor.WAITED
    spin = Sim(cpu_rate=0.5, queue_rate=0.5, work=None)  # computes, at half a core: its CPU decides
    assert _verdict(spin, monkeypatch) == "timeout" and spin.now == pytest.approx(2.0, abs=0.3)


def test_without_a_run_queue_clock_the_last_look_decides_as_before(monkeypatch):
    asleep = Sim(cpu_rate=0.0, queue_rate=0.0, work=None)
    assert _verdict(asleep, monkeypatch, run_queue=False) == executor.WAITED
    assert asleep.now >= executor.WALL_BACKSTOP * 1.0


def test_the_run_queue_clock_reads_this_machines_threads():
    """/proc/TID/schedstat's run-queue delay, summed over a listing of threads (what a slot cgroup lists)."""
    import os
    import tempfile
    from pathlib import Path

    from codea1.sandbox.cgroups import _run_delays

    with tempfile.TemporaryDirectory() as d:
        listing = Path(d) / "tasks"
        listing.write_text(f"{os.getpid()}\n999999999\n")  # a thread that is gone is left out
        delays = _run_delays(listing)
    if delays is None:
        pytest.skip("this kernel keeps no schedstat")
    assert set(delays) == {os.getpid()} and delays[os.getpid()] >= 0
