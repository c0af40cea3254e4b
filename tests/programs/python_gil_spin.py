"""For tests/python_stacks.rs: a daemon thread spins in pure Python (it holds
the GIL nearly all the time) while the main thread sleeps."""
import threading
import time


def spin():
    while True:
        pass


threading.Thread(target=spin, name="spinner", daemon=True).start()
time.sleep(0.3)
print("python_gil_spin: every thread in place", flush=True)
time.sleep(1000)
