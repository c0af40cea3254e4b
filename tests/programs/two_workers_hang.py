"""Hangs at exit with two non-daemon threads in queue.get: threading's
_shutdown joins one of them first (tests/python_culprit.rs)."""
import queue
import threading

jobs = queue.Queue()
for name in ["first", "second"]:
    threading.Thread(target=jobs.get, name=name).start()
threading.Thread(target=threading.Event().wait, name="daemon", daemon=True).start()
print("two_workers_hang: main is done", flush=True)
