"""For scripts/bench-python.sh: THREADS (first argument, default 50) threads,
each asleep 20 Python calls deep, then the main thread sleeps."""
import sys
import threading
import time

count = int(sys.argv[1]) if len(sys.argv) > 1 else 50
ready = threading.Semaphore(0)


def deep(n):
    if n == 0:
        ready.release()
        time.sleep(1000)
    else:
        deep(n - 1)


for i in range(count):
    threading.Thread(target=deep, args=(20,), name=f"worker-{i}", daemon=True).start()
for _ in range(count):
    ready.acquire()
print(f"python_many_threads: {count} threads in place", flush=True)
time.sleep(1000)
