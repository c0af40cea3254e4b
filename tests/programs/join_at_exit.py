"""Hangs at exit in exit-time code: an atexit function joins the daemon
thread "flusher", which waits for an event nobody sets; the daemon thread
"idle" waits too but is joined by nobody (tests/python_culprit.rs)."""
import atexit
import threading

never = threading.Event()
flusher = threading.Thread(target=never.wait, name="flusher", daemon=True)
idle = threading.Thread(target=never.wait, name="idle", daemon=True)


def stop_flusher():
    flusher.join()


idle.start()
flusher.start()
atexit.register(stop_flusher)
print("join_at_exit: main is done", flush=True)
