import os, signal, time
if os.environ.get("OMPI_COMM_WORLD_RANK") == "1":
    os.kill(os.getpid(), signal.SIGKILL)
time.sleep(2)
