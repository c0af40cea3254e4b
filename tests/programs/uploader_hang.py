"""Hangs at exit: a non-daemon thread waits in queue.get forever, so the
interpreter's threading._shutdown waits for it (tests/python_culprit.rs)."""
import queue
import threading
uploads = queue.Queue()


def upload_loop():
    while uploads.get() is not None:
        pass


threading.Thread(target=upload_loop, name="uploader").start()
print("uploader_hang: main is done", flush=True)
