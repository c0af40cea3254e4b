"""A Python program that hangs at exit, for tests/python_stacks.rs: main
returns while a non-daemon thread waits in queue.get forever, and daemon
threads sit in time.sleep under deep recursion, inside a generator, inside a
coroutine, and under a C function calling back into Python (sorted's key).
Prints one line when every thread is in place."""
import asyncio
import queue
import sys
import threading
import time

jobs = queue.Queue()
ready = threading.Semaphore(0)


def drain(q):
    ready.release()
    while True:
        item = q.get()
        if item is None:
            return


def nap():
    ready.release()
    time.sleep(1000)


def recurse(depth):
    if depth == 0:
        ready.release()
        time.sleep(1000)
    else:
        recurse(depth - 1)


def ticks():
    ready.release()
    while True:
        time.sleep(1000)
        yield 1


def generate():
    for _ in ticks():
        pass


async def stall():
    ready.release()
    time.sleep(1000)


def run_coroutine():
    asyncio.run(stall())


def slow_key(item):
    ready.release()
    time.sleep(1000)
    return item


def callback_from_c():
    sorted([3, 1, 2], key=slow_key)


def main():
    threading.Thread(target=drain, args=(jobs,), name="drainer").start()
    for target, name in [
        (nap, "sleeper"),
        (lambda: recurse(40), "recursion"),
        (generate, "generator"),
        (run_coroutine, "coroutine"),
        (callback_from_c, "callback"),
    ]:
        threading.Thread(target=target, name=name, daemon=True).start()
    for _ in range(6):
        ready.acquire()
    time.sleep(0.2)
    print("python_exit_hang: every thread in place; exiting", flush=True)
    sys.stdout.flush()


main()
