"""/dev/shm full while multiprocessing makes a semaphore: run it where /dev/shm is tiny, e.g.
   unshare -m sh -c 'mount -t tmpfs -o size=8k tmpfs /dev/shm && python zoo/repro/numerics/shm_semlock.py'
Each multiprocessing.Lock is a POSIX semaphore, a file in /dev/shm; a DataLoader with workers makes
several (its queues' locks), which is where the same OSError comes from in a container's 64 MB /dev/shm."""
import multiprocessing

locks = []
while True:
    locks.append(multiprocessing.get_context("fork").Lock())
