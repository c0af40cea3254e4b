#!/usr/bin/env python3
"""Which blocking calls a stop interrupts, per way of stopping a process.

Builds tests/programs/eintr_waits.c, starts it with `keep-going` (ten threads
blocked in epoll_wait, select, poll, nanosleep, read, pause, a futex wait,
epoll_pwait, sigtimedwait and recv with SO_RCVTIMEO; each prints when its
call returns and calls it again), stops and resumes it one way, and prints
which calls returned EINTR, whether the parent (this script) was told its
child stopped or continued (waitid), and how long the process was stopped:

  sigstop   kill -STOP, until every thread is stopped, then kill -CONT
  attach    PTRACE_ATTACH on every thread, wait for each, PTRACE_DETACH
  seize     PTRACE_SEIZE + PTRACE_INTERRUPT on every thread, wait, detach
  dumptriage  `dumptriage attach PID` (its group stop, then minidump-writer's
            SIGSTOP + PTRACE_ATTACH, and SIGCONT; then the analysis)

Usage: scripts/measure-stop-eintr.py [path/to/dumptriage] [rounds]
Linux only; needs gcc and ptrace (root, or kernel.yama.ptrace_scope 0).
"""

import ctypes
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PTRACE_ATTACH, PTRACE_DETACH = 16, 17
PTRACE_SEIZE, PTRACE_INTERRUPT = 0x4206, 0x4207
WALL = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def ptrace(request, tid, data=0):
    if libc.ptrace(request, tid, None, ctypes.c_void_p(data)) == -1:
        raise OSError(ctypes.get_errno(), f"ptrace {request:#x} on {tid}")


def threads(pid):
    return sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))


def state(pid, tid):
    with open(f"/proc/{pid}/task/{tid}/stat") as f:
        return f.read().rsplit(") ", 1)[1][0]


def all_stopped(pid):
    return all(state(pid, t) in "tT" for t in threads(pid))


def by_sigstop(pid):
    started = time.perf_counter()
    os.kill(pid, signal.SIGSTOP)
    while not all_stopped(pid):
        time.sleep(0.0005)
    held = time.perf_counter() - started
    os.kill(pid, signal.SIGCONT)
    return held


def by_ptrace(pid, seize):
    started = time.perf_counter()
    tids = threads(pid)
    for tid in tids:
        if seize:
            ptrace(PTRACE_SEIZE, tid)
            ptrace(PTRACE_INTERRUPT, tid)
        else:
            ptrace(PTRACE_ATTACH, tid)
    for tid in tids:
        os.waitpid(tid, WALL)
    held = time.perf_counter() - started
    for tid in tids:
        ptrace(PTRACE_DETACH, tid)
    return held


def by_dumptriage(pid, binary, folder):
    started = time.perf_counter()
    subprocess.run(
        [binary, "attach", str(pid), "-q", "--dump-dir", folder],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=True,
    )
    return time.perf_counter() - started


class Watch:
    """Polls the main thread's state while a method runs: how long it was
    seen stopped (first to last sighting of `T` or `t`)."""

    def __init__(self, pid):
        self.pid, self.first, self.last, self.done = pid, None, None, False
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def run(self):
        while not self.done:
            try:
                stopped = state(self.pid, self.pid) in "tT"
            except OSError:
                return
            now = time.perf_counter()
            if stopped:
                self.first = self.first or now
                self.last = now

    def held(self):
        self.done = True
        self.thread.join()
        return (self.last - self.first) if self.first else 0.0


def measure(program, method, binary):
    child = subprocess.Popen(
        [program, "keep-going"], stderr=subprocess.PIPE, text=True
    )
    os.set_blocking(child.stderr.fileno(), True)
    child.stderr.readline()  # "eintr_waits: N threads waiting"
    while not all(state(child.pid, t) == "S" for t in threads(child.pid)):
        time.sleep(0.01)
    with tempfile.TemporaryDirectory() as folder:
        watch = Watch(child.pid)
        if method == "sigstop":
            took = by_sigstop(child.pid)
        elif method == "attach":
            took = by_ptrace(child.pid, seize=False)
        elif method == "seize":
            took = by_ptrace(child.pid, seize=True)
        else:
            took = by_dumptriage(child.pid, binary, folder)
        time.sleep(0.3)
        held = watch.held()
    # What the parent was told: a stop or a continue of its child.
    told = []
    while True:
        info = os.waitid(
            os.P_PID, child.pid, os.WSTOPPED | os.WCONTINUED | os.WNOHANG
        )
        if info is None:
            break
        told.append({os.CLD_STOPPED: "stopped", os.CLD_CONTINUED: "continued"}.get(
            info.si_code, str(info.si_code)))
    child.kill()
    lines = child.stderr.read().splitlines()
    child.wait()
    calls = sorted({line.split(": ", 1)[1].split(" returned")[0] for line in lines
                    if " returned " in line})
    return calls, told, held, took


def main():
    # The watcher polls every 0.1 ms at most, even while the main thread
    # makes its ptrace calls.
    sys.setswitchinterval(0.0001)
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        ROOT, "target", "release", "dumptriage")
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with tempfile.TemporaryDirectory() as build:
        program = os.path.join(build, "eintr_waits")
        subprocess.run(
            ["gcc", "-g", "-O0", "-o", program,
             os.path.join(ROOT, "tests", "programs", "eintr_waits.c"), "-lpthread"],
            check=True,
        )
        methods = ["sigstop", "attach", "seize"]
        if os.path.exists(binary):
            methods.append("dumptriage")
        else:
            print(f"({binary} not found: `dumptriage attach` is not measured)")
        print(f"kernel {os.uname().release}, {rounds} rounds each; 'stopped': how long "
              "the main thread was seen stopped; 'took': the method's own time")
        for method in methods:
            seen, told, helds, tooks = set(), set(), [], []
            for _ in range(rounds):
                calls, parent, held, took = measure(program, method, binary)
                seen.update(calls)
                told.update(parent)
                helds.append(held)
                tooks.append(took)
            median = lambda values: sorted(values)[len(values) // 2] * 1000
            print(f"{method:10} returned EINTR: {', '.join(sorted(seen)) or 'none'}; "
                  f"parent told: {', '.join(sorted(told)) or 'nothing'}; "
                  f"stopped {median(helds):.1f} ms, took {median(tooks):.1f} ms (medians)")


if __name__ == "__main__":
    main()
