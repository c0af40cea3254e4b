"""Hangs during work, not at exit: the main thread itself waits in
queue.get while a worker sleeps; no thread is joined (tests/python_culprit.rs)."""
import queue
import threading
import time

threading.Thread(target=time.sleep, args=(1000,), name="worker", daemon=True).start()
print("main_waits_on_queue: main waits", flush=True)
queue.Queue().get()
